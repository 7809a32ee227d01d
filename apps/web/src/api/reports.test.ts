import {
  type BulkHistoryRow,
  type DeenrollRow,
  type ExecutedCommandRow,
  exportFileName,
  MESSAGES,
} from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { fileApi } from '../test/fakeApi';
import {
  type ApiCallOptions,
  type ApiClient,
  ApiError,
  type FileProgress,
  fileNameFromDisposition,
  NetworkError,
} from './client';
import {
  exportReport,
  exportSearch,
  fetchReport,
  fetchUploadedFile,
  hasMorePages,
  REPORT_PAGE_SIZE,
  reportKeys,
} from './reports';
import { browserTimeZone } from './timeZone';

const deenroll = (i: number): DeenrollRow => ({
  imei1: String(350000000000000 + i),
  imei2: null,
  action: 'DEENROLLED',
  createdat: '2030-01-01T00:00:00.000Z',
});

const history = (i: number): BulkHistoryRow => ({
  id: i,
  date_and_time: '2030-01-01T00:00:00.000Z',
  file: `/api/v2/uploads/setWallpaperfiles/2030-01-01T00-00-00-000Z-f${i}.csv`,
  oldfile: `f${i}.csv`,
  isComplete: 'complete',
  lastimei: null,
  remarks: null,
});

const command = (i: number): ExecutedCommandRow => ({
  id: i,
  date_and_time: '2030-01-01T00:00:00.000Z',
  imei1: String(350000000000000 + i),
  transactionId: `t${i}`,
  interface: 'B',
  command: 'LOCKWALLPAPER',
  status: 'EXECUTED',
  user: 'admin@lendlock.com',
  commandType: '',
  createdat: '2030-01-01T00:00:00.000Z',
});

/** A downloadReports.php that pages `items` and `commands` by offset and limit as the server does. */
function fakeReports(items: unknown[], commands: unknown[]) {
  const calls: { script: string; body: { offset: number; limit: number } & Record<string, unknown> }[] = [];
  const call = vi.fn(async (script: string, options: ApiCallOptions<unknown> = {}) => {
    const body = options.body as { offset: number; limit: number };
    calls.push({ script, body: options.body as (typeof calls)[number]['body'] });
    const answer = {
      status: 'success',
      message: `${items.length} rows, ${commands.length} commands`,
      items: items.slice(body.offset, body.offset + body.limit),
      commanditems: commands.slice(body.offset, body.offset + body.limit),
      total_items: items.length,
      total_commanditems: commands.length,
      offset: body.offset,
      limit: body.limit,
    };
    return options.parse ? options.parse(answer) : answer;
  });
  return { api: { call } as unknown as ApiClient, calls };
}

describe('fetchReport', () => {
  it('reads every page until the totals are reached, never cutting a large result', async () => {
    const rows = Array.from({ length: 25_000 }, (_, i) => deenroll(i));
    const { api, calls } = fakeReports(rows, []);
    const progress: { loaded: number; total: number }[] = [];
    const report = await fetchReport(
      api,
      { report: 'deenroll', startdate: '2030-01-01', enddate: '2030-01-31' },
      { onProgress: (p) => progress.push(p) },
    );
    expect(REPORT_PAGE_SIZE).toBe(10_000);
    expect(calls.map((c) => [c.script, c.body.offset, c.body.limit])).toEqual([
      ['downloadReports', 0, 10_000],
      ['downloadReports', 10_000, 10_000],
      ['downloadReports', 20_000, 10_000],
    ]);
    expect(calls[0]?.body).toMatchObject({
      report: 'deenroll',
      startdate: '2030-01-01',
      enddate: '2030-01-31',
      // The browser's days: its time zone goes with every page (timeZone.ts).
      timeZone: browserTimeZone(),
    });
    expect(report.kind).toBe('deenroll');
    expect(report.items).toHaveLength(25_000);
    expect(report.items.at(-1)).toEqual(deenroll(24_999));
    expect(progress.at(-1)).toEqual({ loaded: 25_000, total: 25_000 });
  });

  it('pages on while either part has more rows: a few uploads, many executed commands', async () => {
    const { api, calls } = fakeReports(
      [history(1), history(2)],
      Array.from({ length: 7 }, (_, i) => command(i)),
    );
    const report = await fetchReport(
      api,
      { report: 'setwallpaper', startdate: '2030-01-01', enddate: '2030-01-01' },
      { pageSize: 3 },
    );
    expect(calls.map((c) => c.body.offset)).toEqual([0, 3, 6]);
    expect(report.kind).toBe('command');
    expect(report.items).toEqual([history(1), history(2)]);
    expect(report.commands.map((c) => c.id)).toEqual([0, 1, 2, 3, 4, 5, 6]);
  });

  it('sends the registration filter and asks once for a small report', async () => {
    const { api, calls } = fakeReports([], []);
    const report = await fetchReport(api, {
      report: 'registration',
      startdate: '2030-01-01',
      enddate: '2030-01-02',
      match: 'NO',
    });
    expect(calls).toHaveLength(1);
    expect(calls[0]?.body).toMatchObject({ match: 'NO', offset: 0, limit: REPORT_PAGE_SIZE });
    expect(report).toEqual({ kind: 'registration', items: [], commands: [], message: '0 rows, 0 commands' });
  });

  it('stops at a short page even when the totals promised more (rows removed meanwhile)', () => {
    const page = { items: [1], commanditems: [], total_items: 10, total_commanditems: 0, limit: 5 };
    expect(hasMorePages(5, page as never)).toBe(false);
    expect(hasMorePages(5, { ...page, items: [1, 2, 3, 4, 5] } as never)).toBe(true);
    expect(hasMorePages(10, { ...page, items: [1, 2, 3, 4, 5] } as never)).toBe(false);
  });

  it('raises a non-success reply as an ApiError carrying the server message', async () => {
    const call = vi.fn(async (_script: string, options: ApiCallOptions<unknown> = {}) => {
      const body = { status: 'error', message: 'Report is not available' };
      return options.parse ? options.parse(body) : body;
    });
    const failure = fetchReport({ call } as unknown as ApiClient, {
      report: 'release',
      startdate: '2030-01-01',
      enddate: '2030-01-01',
    });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ serverMessage: 'Report is not available' });
  });

  it('names every parameter in the query key', () => {
    expect(reportKeys.report({ report: 'registration', startdate: 'a', enddate: 'b', match: 'YES' })).toEqual(
      ['reports', 'report', { report: 'registration', startdate: 'a', enddate: 'b', match: 'YES' }],
    );
  });
});

describe('file names', () => {
  it('reads the server name from content-disposition', () => {
    expect(fileNameFromDisposition('attachment; filename="deenroll_record-2030-01-01-2030-01-31.xlsx"')).toBe(
      'deenroll_record-2030-01-01-2030-01-31.xlsx',
    );
    expect(fileNameFromDisposition("attachment; filename*=UTF-8''report%20one.xlsx; filename=x.xlsx")).toBe(
      'report one.xlsx',
    );
    expect(fileNameFromDisposition('attachment; filename=plain.csv')).toBe('plain.csv');
    expect(fileNameFromDisposition('attachment')).toBeNull();
    expect(fileNameFromDisposition(null)).toBeNull();
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

describe('exportReport', () => {
  const query = {
    report: 'registration',
    startdate: '2030-01-01',
    enddate: '2030-01-31',
    match: 'YES' as const,
  };

  it('streams the export with the session token, reporting bytes and rows, under the server file name', async () => {
    const name = exportFileName('registration', 'items', '2030-01-01', '2030-01-31', 'YES');
    const { api, requests } = fileApi(
      new Response(stream(['PK', 'abcd', 'efgh']), {
        headers: {
          'content-type': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
          'content-disposition': `attachment; filename="${name}"`,
          'x-total-rows': '1200',
        },
      }),
    );
    const progress: FileProgress[] = [];
    const file = await exportReport(api, query, 'items', { onProgress: (p) => progress.push(p) });
    expect(requests[0]?.url).toBe(
      `http://console.test/api/v2/reports/export?report=registration&startdate=2030-01-01&enddate=2030-01-31&match=YES&part=items&timeZone=${encodeURIComponent(browserTimeZone() ?? '')}`,
    );
    expect(requests[0]?.headers.get('X-API-Key')).toBe('tok-1');
    expect(file.fileName).toBe('Registration_Status_Matched-2030-01-01-2030-01-31.xlsx');
    expect(file.totalRows).toBe(1200);
    expect(await file.blob.text()).toBe('PKabcdefgh');
    expect(progress.map((p) => p.bytes)).toEqual([0, 2, 6, 10]);
    expect(progress.every((p) => p.totalRows === 1200 && p.fileName === name)).toBe(true);
  });

  it("falls back to the contract's spec name when the header is missing", async () => {
    const { api } = fileApi(new Response(stream(['x'])));
    const file = await exportReport(
      api,
      { report: 'setwallpaper', startdate: '2030-01-01', enddate: '2030-01-02' },
      'commands',
    );
    expect(file.fileName).toBe('report-2030-01-01-2030-01-02.xlsx');
    expect(file.totalRows).toBeNull();
  });

  it('asks for the executed commands part without a filter on command tabs', () => {
    expect(exportSearch({ report: 'release', startdate: 'a', enddate: 'b' }, 'commands')).toBe(
      `report=release&startdate=a&enddate=b&part=commands&timeZone=${encodeURIComponent(browserTimeZone() ?? '')}`,
    );
  });

  it("raises the server's refusal as an ApiError with its message", async () => {
    const { api } = fileApi(
      new Response(JSON.stringify({ status: 'error', message: MESSAGES.endBeforeStart }), { status: 400 }),
    );
    const failure = exportReport(api, query, 'items');
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ status: 400, serverMessage: MESSAGES.endBeforeStart });
  });

  it("ends the session on 'Authorization Failed'", async () => {
    const { api, end, onAuthorizationFailed } = fileApi(
      new Response(JSON.stringify({ status: 'error', message: MESSAGES.authorizationFailed }), {
        status: 401,
      }),
    );
    await expect(exportReport(api, query, 'items')).rejects.toBeInstanceOf(ApiError);
    expect(end).toHaveBeenCalledOnce();
    expect(onAuthorizationFailed).toHaveBeenCalledOnce();
  });

  it('raises a NetworkError when the server cannot be reached', async () => {
    const { api } = fileApi(new TypeError('Failed to fetch'));
    await expect(exportReport(api, query, 'items')).rejects.toBeInstanceOf(NetworkError);
  });
});

describe('fetchUploadedFile', () => {
  it('fetches the history link with the session token and keeps the server file name', async () => {
    const { api, requests } = fileApi(
      new Response('Sno,IMEI1\r\n1,350000000000001\r\n', {
        headers: {
          'content-type': 'text/csv',
          'content-disposition': 'attachment; filename="wallpaper.csv"',
        },
      }),
    );
    const file = await fetchUploadedFile(
      api,
      '/api/v2/uploads/setWallpaperfiles/2030-01-01T00-00-00-000Z-wallpaper.csv',
    );
    expect(requests[0]?.url).toBe(
      'http://console.test/api/v2/uploads/setWallpaperfiles/2030-01-01T00-00-00-000Z-wallpaper.csv',
    );
    expect(requests[0]?.headers.get('X-API-Key')).toBe('tok-1');
    expect(file.fileName).toBe('wallpaper.csv');
    expect(await file.blob.text()).toBe('Sno,IMEI1\r\n1,350000000000001\r\n');
  });
});
