/**
 * Support for the batch browser tests: batch CSVs (IMEI and Notify), IMEIs no device has, the batch panel's
 * file picker, downloads read back as text, and the batch calls in plain JSON to arrange a batch or to
 * check what the server recorded.
 */
import { readFile } from 'node:fs/promises';
import type { BatchProgress, BatchResult } from '@lendlock/contract';
import type { Download, Locator, Page } from 'playwright-core';
import { API_KEY_HEADER } from '../../apps/web/src/api/client';
import { apiCall } from './fleet';

/** An IMEI batch CSV (Sno, IMEI1) with CRLF line ends. */
export function imeiCsv(imeis: readonly string[]): string {
  const lines = ['Sno,IMEI1'];
  for (let i = 0; i < imeis.length; i++) lines.push(`${i + 1},${imeis[i]}`);
  return `${lines.join('\r\n')}\r\n`;
}

export interface NotifyCsvRow {
  name: string;
  imei: string;
  amount: string;
  date: string;
  template: 'Pre' | 'Due' | 'Post';
}

/** A Notify batch CSV (sno, name, imei1, amount, date, template). */
export function notifyCsv(rows: readonly NotifyCsvRow[]): string {
  const lines = ['sno,name,imei1,amount,date,template'];
  for (const [i, r] of rows.entries())
    lines.push([i + 1, r.name, r.imei, r.amount, r.date, r.template].join(','));
  return `${lines.join('\r\n')}\r\n`;
}

/** `count` IMEIs of 15 digits that no simulated device has (those start with 35), from `from` on. */
export function unknownImeis(count: number, from = 0): string[] {
  return Array.from({ length: count }, (_, i) => `99${String(from + i).padStart(13, '0')}`);
}

/** Chooses a file in the batch panel's CSV picker. */
export async function chooseFile(
  panel: Locator,
  name: string,
  content: string | Buffer,
  mimeType = 'text/csv',
): Promise<void> {
  const buffer = typeof content === 'string' ? Buffer.from(content) : content;
  await panel.locator('input[type="file"]').setInputFiles({ name, mimeType, buffer });
}

/**
 * Clicks and returns the download it starts: its suggested name, its bytes, and its text after the UTF-8
 * BOM that every CSV download starts with (`bom` says whether it did).
 */
export async function downloadOf(
  page: Page,
  click: () => Promise<void>,
): Promise<{ name: string; text: string; bom: boolean; bytes: Buffer }> {
  const [started] = await Promise.all([page.waitForEvent('download') as Promise<Download>, click()]);
  const bytes = await readFile(await started.path());
  const text = bytes.toString('utf8');
  const bom = text.startsWith('\uFEFF');
  return { name: started.suggestedFilename(), text: bom ? text.slice(1) : text, bom, bytes };
}

/** The text of each cell of the rendered body rows of the table inside `scope` (spacer rows left out). */
export async function renderedRows(scope: Locator): Promise<string[][]> {
  return scope
    .locator('tbody tr:not([aria-hidden])')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')),
    );
}

/** The batch calls as an integrator makes them (plain JSON, the session token as X-API-Key). */
export interface BatchApi {
  upload(script: string, fileName: string, csv: string, fields?: Record<string, string>): Promise<number>;
  progress(batchId: number): Promise<BatchProgress>;
  current(statusOf: string): Promise<BatchProgress | null>;
  /** Every result of the batch, in S.No. order. */
  results(batchId: number): Promise<BatchResult[]>;
  pause(batchId: number): Promise<BatchProgress>;
}

export function batchApi(baseUrl: string, token: string, user: string): BatchApi {
  const post = <T>(path: string, body: unknown) => apiCall<T>(baseUrl, token, `/api/v2/batch/${path}`, body);
  return {
    async upload(script, fileName, csv, fields = {}) {
      const form = new FormData();
      form.append('file', new Blob([csv], { type: 'text/csv' }), fileName);
      form.append('user', user);
      for (const [key, value] of Object.entries(fields)) form.append(key, value);
      const response = await fetch(`${baseUrl}/api/${script}`, {
        method: 'POST',
        headers: { [API_KEY_HEADER]: token },
        body: form,
      });
      const body = (await response.json()) as { batchId?: number; message?: string };
      if (!response.ok || typeof body.batchId !== 'number')
        throw new Error(`upload refused: ${body.message}`);
      return body.batchId;
    },
    progress: async (batchId) => (await post<{ batch: BatchProgress }>('progress', { batchId })).batch,
    current: async (statusOf) => (await post<{ batch: BatchProgress | null }>('current', { statusOf })).batch,
    async results(batchId) {
      const all: BatchResult[] = [];
      for (;;) {
        const page = await post<{ items: BatchResult[] }>('results', {
          batchId,
          offset: all.at(-1)?.sno ?? 0,
          limit: 100_000,
        });
        all.push(...page.items);
        if (page.items.length < 100_000) return all;
      }
    },
    pause: async (batchId) => (await post<{ batch: BatchProgress }>('pause', { batchId })).batch,
  };
}
