/**
 * The operator's time zone in a real browser: with the browser in Asia/Kolkata (the server's REPORT_TIMEZONE
 * is UTC), Reports for today list the registration made at 00:01 today in Kolkata, which is 18:31 yesterday
 * in UTC, and show its time as Kolkata time; the downloaded export holds that Kolkata time in a date cell. A
 * browser in UTC asking for the same day sees neither row: the day asked for is the browser's. The Audit Log
 * agrees: From and To are Kolkata's days, its rows and its export show Kolkata time.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { dayInTimeZone, daysInZone, exportFileName } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import ExcelJS from 'exceljs';
import type { Browser, Download, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { AUDIT_LOG_LABELS } from '../apps/web/src/pages/AuditLog/labels';
import { REPORT_LABELS } from '../apps/web/src/pages/Reports/labels';
import {
  type ConsolePage,
  fieldLabelled,
  launchBrowser,
  openConsole,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

const ZONE = 'Asia/Kolkata';
/** Registered at 00:01 today in Kolkata (yesterday in UTC): in Kolkata's today. */
const TODAY_IMEI = '356938035643901';
/** Registered at 23:59 yesterday in Kolkata: in neither report of today. */
const YESTERDAY_IMEI = '356938035643902';
/** The audit rows made beside them (at the same two times). */
const ACTION = 'tz.e2e';

let today: string;
let seededDir: string;
let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let consolePage: ConsolePage | undefined;

beforeAll(async () => {
  today = dayInTimeZone(ZONE) as string;
  const { start } = daysInZone(today, today, ZONE);
  // The rows are written into a copy of the template before a server starts on it.
  seededDir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-timezones-'));
  cpSync(inject('templateDataDir'), seededDir, { recursive: true });
  // The embedded database of the server's DATA_DIR (apps/server/src/db/database.ts).
  const lite = await PGlite.create(join(seededDir, 'pgdata'));
  try {
    const at = [new Date(start.getTime() + 60_000), new Date(start.getTime() - 60_000)];
    await lite.query(
      `INSERT INTO audit_log (actor, action, target, result, at)
       VALUES ('system', $1, $2, 'success', $3), ('system', $1, $4, 'success', $5)`,
      [ACTION, TODAY_IMEI, at[0]?.toISOString(), YESTERDAY_IMEI, at[1]?.toISOString()],
    );
    await lite.query(
      `INSERT INTO registrations (imei1, match_status, registration_status, brand, model, created_at)
       VALUES ($1, 'YES', 'REGISTERED', 'Samsung', 'A15', $2), ($3, 'YES', 'REGISTERED', 'Samsung', 'A15', $4)`,
      [
        TODAY_IMEI,
        new Date(start.getTime() + 60_000).toISOString(),
        YESTERDAY_IMEI,
        new Date(start.getTime() - 60_000).toISOString(),
      ],
    );
  } finally {
    await lite.close();
  }
  [server, browser] = await Promise.all([startServer({ templateDataDir: seededDir }), launchBrowser()]);
  ({ codec } = await serverCodec(server.baseUrl));
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (seededDir) rmSync(seededDir, { recursive: true, force: true });
});

afterEach(async () => {
  if (!consolePage) return;
  expect(await consolePage.cspViolations()).toEqual([]);
  expect(consolePage.pageErrors).toEqual([]);
  await consolePage.close();
  consolePage = undefined;
});

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

/** Signs in as the ADMIN in a browser set to `timezoneId` and asks for today's registrations (All). */
async function todaysRegistrations(
  timezoneId: string,
): Promise<{ page: Page; sent: Record<string, unknown> }> {
  consolePage = await openConsole(browser, server.baseUrl, { timezoneId });
  const { page } = consolePage;
  await signIn(page, codec, USERS.admin);
  await page.getByTestId('nav-reports').click();
  await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
  await fieldLabelled(page, REPORT_LABELS.startDate).fill(today);
  await fieldLabelled(page, REPORT_LABELS.endDate).fill(today);
  await fieldLabelled(page, REPORT_LABELS.filter).selectOption('ALL');
  const request = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/downloadReports.php');
  await button(page, REPORT_LABELS.submit).click();
  const sent = codec.open<Record<string, unknown>>((await request).postDataJSON());
  await page.locator('[data-testid="report-results"][data-report="registration"]').waitFor();
  return { page, sent };
}

async function renderedRows(page: Page): Promise<string[][]> {
  return page
    .getByTestId('report-items')
    .locator('tbody tr.virtual-row')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
}

describe('the browser in Asia/Kolkata', () => {
  it("lists today's registration made today in Kolkata, at its Kolkata time, and exports that time", async () => {
    const { page, sent } = await todaysRegistrations(ZONE);
    // The console sent its zone (Chromium may name it by its older alias).
    expect(['Asia/Kolkata', 'Asia/Calcutta']).toContain(sent.timeZone);
    const count = page.getByTestId('report-items-count');
    await expect(count.getAttribute('data-count')).resolves.toBe('1');
    const rows = await renderedRows(page);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toContain(TODAY_IMEI);
    expect(rows[0]).toContain(`${today} 00:01:00`);
    expect(rows.flat()).not.toContain(YESTERDAY_IMEI);

    const started = page.waitForEvent('download');
    await button(page, REPORT_LABELS.download).click();
    const download: Download = await started;
    expect(download.suggestedFilename()).toBe(exportFileName('registration', 'items', today, today, 'ALL'));
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile((await download.path()) ?? '');
    const sheet = workbook.worksheets[0];
    expect(sheet?.rowCount).toBe(2);
    const row = sheet?.getRow(2);
    expect(row?.getCell(1).value).toBe(TODAY_IMEI);
    const when = row?.getCell(5);
    // A date cell: a Date whose UTC fields are the wall clock it shows, in the format the screen uses.
    expect(when?.type).toBe(ExcelJS.ValueType.Date);
    expect(when?.value).toEqual(new Date(`${today}T00:01:00.000Z`));
    expect(when?.numFmt).toBe('yyyy-mm-dd hh:mm:ss');
  });
});

describe('the same day asked for from a browser in UTC', () => {
  it('lists neither row: both were made on the day before in UTC', async () => {
    const { page, sent } = await todaysRegistrations('UTC');
    expect(['UTC', 'Etc/UTC']).toContain(sent.timeZone);
    await expect(page.getByTestId('report-items-count').getAttribute('data-count')).resolves.toBe('0');
  });
});

describe('the Audit Log in Asia/Kolkata', () => {
  it("searches Kolkata's today and shows and exports the Kolkata time", async () => {
    consolePage = await openConsole(browser, server.baseUrl, { timezoneId: ZONE });
    const { page } = consolePage;
    await signIn(page, codec, USERS.superadmin);
    await page.getByTestId('nav-auditLog').click();
    await page.getByRole('heading', { name: screenTitle('auditLog'), exact: true }).waitFor();
    // The screen opens on the last 7 days of Kolkata, already searched.
    await page.locator('[data-testid="audit-results"][data-state="ready"]').waitFor();
    await expect(fieldLabelled(page, AUDIT_LOG_LABELS.to).inputValue()).resolves.toBe(today);
    await fieldLabelled(page, AUDIT_LOG_LABELS.action).fill(ACTION);
    await fieldLabelled(page, AUDIT_LOG_LABELS.from).fill(today);
    await fieldLabelled(page, AUDIT_LOG_LABELS.to).fill(today);
    await button(page, AUDIT_LOG_LABELS.search).click();
    const count = page
      .locator('[data-testid="audit-results"][data-state="ready"]')
      .getByTestId('audit-count');
    await count.waitFor();
    await expect(count.getAttribute('data-total')).resolves.toBe('1');
    const rows = await page
      .getByTestId('audit-rows')
      .locator('tbody tr.virtual-row')
      .evaluateAll((list) =>
        list.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent)),
      );
    expect(rows).toEqual([[`${today} 00:01:00`, 'system', ACTION, TODAY_IMEI, '', 'success', '']]);
    await page
      .getByText(AUDIT_LOG_LABELS.datesInZone(ZONE))
      .or(page.getByText(AUDIT_LOG_LABELS.datesInZone('Asia/Calcutta')))
      .waitFor();

    const started = page.waitForEvent('download');
    await button(page, AUDIT_LOG_LABELS.export).click();
    const download: Download = await started;
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile((await download.path()) ?? '');
    const sheet = workbook.worksheets[0];
    expect(sheet?.rowCount).toBe(2);
    expect(sheet?.getRow(2).getCell(2).value).toEqual(new Date(`${today}T00:01:00.000Z`));
    expect(sheet?.getRow(2).getCell(5).value).toBe(TODAY_IMEI);
  });
});
