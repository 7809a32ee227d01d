import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { fileApi, noFile } from '../test/fakeApi';
import {
  AUDIT_PAGE_SIZE,
  type AuditRow,
  auditExportSearch,
  auditFileName,
  auditKeys,
  exportAudit,
  searchAudit,
} from './audit';
import { type ApiCallOptions, type ApiClient, ApiError, type FileProgress, NetworkError } from './client';
import { browserTimeZone } from './timeZone';

/** The query parameter of the browser's time zone, which every search and export carries. */
const zone = () => `timeZone=${encodeURIComponent(browserTimeZone() ?? '')}`;

const row: AuditRow = {
  id: 41,
  at: '2030-01-02T03:04:05.000Z',
  actor: 'admin@lendlock.com',
  action: 'user.add',
  target: 'agent@lendlock.com',
  address: '127.0.0.1',
  result: 'success',
  details: '{"userlevel":"USER","permissions":[]}',
};

/** An ApiClient that records each call and answers with `reply` run through the call's parse. */
function fakeApi(reply: unknown) {
  const calls: { script: string; options: ApiCallOptions<unknown> }[] = [];
  const api: ApiClient = {
    async call<T>(script: string, options: ApiCallOptions<T> = {}): Promise<T> {
      calls.push({ script, options: options as ApiCallOptions<unknown> });
      return options.parse ? options.parse(reply) : (reply as T);
    },
    file: noFile,
  };
  return { api, calls };
}

describe('searchAudit', () => {
  it('POSTs v2/audit/search with the filter fields that are set, the offset and the limit', async () => {
    const { api, calls } = fakeApi({ status: 'success', items: [row], total: 1201 });
    const result = await searchAudit(api, {
      user: 'admin@lendlock.com',
      action: '',
      from: '2030-01-01',
      offset: 500,
      limit: AUDIT_PAGE_SIZE,
    });
    expect(result).toEqual({ status: 'success', items: [row], total: 1201 });
    expect(calls.map((call) => [call.script, call.options.method, call.options.body])).toEqual([
      [
        'v2/audit/search',
        'POST',
        {
          user: 'admin@lendlock.com',
          from: '2030-01-01',
          offset: 500,
          limit: AUDIT_PAGE_SIZE,
          // The browser's days: its time zone goes with every search (timeZone.ts).
          timeZone: browserTimeZone(),
        },
      ],
    ]);
  });

  it('refuses a reply that is not the search shape', async () => {
    const { api } = fakeApi({ status: 'success', items: [{ ...row, id: 'x' }], total: 1 });
    await expect(searchAudit(api, { offset: 0, limit: 10 })).rejects.toThrow();
  });

  it('the server may ask for at most 10,000 rows a call', () => {
    expect(AUDIT_PAGE_SIZE).toBeLessThanOrEqual(10_000);
  });

  it('names every parameter the search sends in the query key', () => {
    const a = auditKeys.search({ imei: '350000000000001', offset: 0, limit: 500 });
    const b = auditKeys.search({ imei: '350000000000001', offset: 500, limit: 500 });
    const c = auditKeys.search({ imei: '350000000000001', to: '2030-01-01', offset: 0, limit: 500 });
    expect(a).not.toEqual(b);
    expect(a).not.toEqual(c);
    expect(a[2]).toEqual({
      imei: '350000000000001',
      user: null,
      action: null,
      from: null,
      to: null,
      offset: 0,
      limit: 500,
    });
  });
});

describe('export file name and query', () => {
  it('names the file as the server does: audit-{from|all}-{to|all}.xlsx', () => {
    expect(auditFileName({})).toBe('audit-all-all.xlsx');
    expect(auditFileName({ from: '2030-01-01' })).toBe('audit-2030-01-01-all.xlsx');
    expect(auditFileName({ from: '2030-01-01', to: '2030-01-31' })).toBe('audit-2030-01-01-2030-01-31.xlsx');
  });

  it("sends only the fields that are set, encoded, and the browser's time zone", () => {
    expect(auditExportSearch({})).toBe(zone());
    expect(auditExportSearch({ user: 'a+b@lendlock.com', imei: '', action: 'key.', to: '2030-01-31' })).toBe(
      `user=a%2Bb%40lendlock.com&action=key.&to=2030-01-31&${zone()}`,
    );
  });
});

function stream(chunks: string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
}

describe('exportAudit', () => {
  it('streams the export with the session token, reporting bytes and rows, under the server file name', async () => {
    const { api, requests } = fileApi(
      new Response(stream(['PK', 'abc']), {
        headers: {
          'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          'content-disposition': 'attachment; filename="audit-2030-01-01-all.xlsx"',
          'x-total-rows': '7',
        },
      }),
    );
    const progress: FileProgress[] = [];
    const file = await exportAudit(
      api,
      { user: 'root@lendlock.com', from: '2030-01-01' },
      { onProgress: (p) => progress.push(p) },
    );
    expect(requests[0]?.url).toBe(
      `http://console.test/api/v2/audit/export?user=root%40lendlock.com&from=2030-01-01&${zone()}`,
    );
    expect(requests[0]?.headers.get('X-API-Key')).toBe('tok-1');
    expect(file.fileName).toBe('audit-2030-01-01-all.xlsx');
    expect(file.totalRows).toBe(7);
    expect(await file.blob.text()).toBe('PKabc');
    expect(progress.map((p) => p.bytes)).toEqual([0, 2, 5]);
  });

  it('asks for the whole log with only the time zone, and names it as the server would without a header', async () => {
    const { api, requests } = fileApi(new Response(stream(['x'])));
    const file = await exportAudit(api, {});
    expect(requests[0]?.url).toBe(`http://console.test/api/v2/audit/export?${zone()}`);
    expect(file.fileName).toBe('audit-all-all.xlsx');
  });

  it("raises the server's refusal as an ApiError with its message", async () => {
    const { api } = fileApi(
      new Response(JSON.stringify({ status: 'error', message: MESSAGES.endBeforeStart }), { status: 400 }),
    );
    const failure = exportAudit(api, { from: '2030-02-01', to: '2030-01-01' });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 400, serverMessage: MESSAGES.endBeforeStart });
  });

  it('raises a NetworkError when the server cannot be reached', async () => {
    const { api } = fileApi(new TypeError('Failed to fetch'));
    await expect(exportAudit(api, {})).rejects.toBeInstanceOf(NetworkError);
  });
});
