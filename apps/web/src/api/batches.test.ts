import {
  type BatchProgress,
  type BatchResult,
  dayInTimeZone,
  MESSAGES,
  type Session,
  validateNotifyCsv,
} from '@lendlock/contract';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileApi } from '../test/fakeApi';
import {
  cancelBatch,
  fetchAllBatchResults,
  fetchBatchProgress,
  fetchCurrentBatch,
  pauseBatch,
  resumeBatch,
  uploadBatch,
  uploadFailureText,
} from './batches';
import { ApiError, createApiClient, isSessionLost, NetworkError } from './client';

interface Seen {
  path: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A client over a fake fetch: `answer` gives each request's reply; JSON bodies are "sealed" as plain JSON. */
function clientWith(answer: (path: string, body: unknown) => { status?: number; body: unknown }) {
  const requests: Seen[] = [];
  const api = createApiClient({
    config: { apiBase: '/api/', keyApiBase: '/keyapi/' },
    codec: {
      seal: async (value) => ({ payload: JSON.stringify(value), transactionId: '00' }),
      open: async (envelope) => JSON.parse((envelope as { payload: string }).payload),
    },
    sessions: { get: () => ({ token: 'token-1' }) as Session, end: () => undefined },
    onAuthorizationFailed: () => undefined,
    fetch: async (input, init) => {
      const path = new URL(String(input), 'http://console.test').pathname;
      const raw = init?.body;
      const body =
        raw instanceof FormData
          ? Object.fromEntries(
              [...raw.entries()].map(([k, v]) => [k, typeof v === 'string' ? v : `file:${v.name}`]),
            )
          : raw
            ? JSON.parse(JSON.parse(String(raw)).payload)
            : null;
      requests.push({ path, headers: { ...(init?.headers as Record<string, string>) }, body });
      const reply = answer(path, body);
      return new Response(JSON.stringify(reply.body), { status: reply.status ?? 200 });
    },
  });
  return { api, requests };
}

const progress: BatchProgress = {
  batchId: 7,
  statusOf: 'lockfiles',
  command: 'LOCK',
  batchfilename: 'devices.csv',
  isComplete: 'incomplete',
  phase: 'running',
  lastimei: null,
  total: 3,
  valid: 3,
  invalid: 0,
  found: 0,
  notFound: 0,
  processed: 0,
  createdAt: '2030-01-01T00:00:00.000Z',
  startedAt: null,
  completedAt: null,
  elapsedMs: 0,
  pausedReason: null,
};

const result = (sno: number): BatchResult => ({
  sno,
  imei: String(356938035643800 + sno),
  validate: 'found',
  note: null,
  transactionId: null,
  name: null,
  amount: null,
  date: null,
  template: null,
  header: null,
  notification: null,
});

/** Makes the browser's clock read `zone`'s wall clock (Date) and report `zone` (Intl). */
function inZone(zone: string) {
  const previous = process.env.TZ;
  process.env.TZ = zone;
  const real = Intl.DateTimeFormat.prototype.resolvedOptions;
  vi.spyOn(Intl.DateTimeFormat.prototype, 'resolvedOptions').mockImplementation(function (
    this: Intl.DateTimeFormat,
  ) {
    return { ...real.call(this), timeZone: zone };
  });
  return () => {
    if (previous === undefined) delete process.env.TZ;
    else process.env.TZ = previous;
  };
}

describe('batches api', () => {
  let restoreZone = () => {};
  afterEach(() => {
    restoreZone();
    restoreZone = () => {};
    vi.useRealTimers();
    vi.restoreAllMocks();
  });

  it('sends a Notify file the preview accepted at 04:57 in Kolkata with the zone that judged it', async () => {
    restoreZone = inZone('Asia/Kolkata');
    // 2026-11-28 04:57 in Kolkata, 2026-11-27 23:27 in UTC.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T23:27:00.000Z') });
    const text = 'sno,name,imei1,amount,date,template\r\n1,Asha,356938035643809,1499.50,28/11/2026,Due\r\n';
    // The preview judges the browser's own day: the Due row is today.
    expect((await validateNotifyCsv(text)).invalidCount).toBe(0);
    // The day a server judging UTC would see is yesterday: the row would be refused there.
    const utc = await validateNotifyCsv(text, { today: dayInTimeZone('UTC') as string });
    expect(utc.invalid[0]?.error).toContain('Invalid date for Due (must be today)');
    const { api, requests } = clientWith(() => ({
      body: { status: 'success', message: 'ok', batchId: 8, total: 1 },
    }));
    const file = new File([text], 'due.csv', { type: 'text/csv' });
    await uploadBatch(api, { script: 'bulkNotifyCopy.php', file, user: 'ops@lendlock.com' });
    expect(requests[0]?.body).toEqual({
      file: 'file:due.csv',
      user: 'ops@lendlock.com',
      timeZone: 'Asia/Kolkata',
    });
  });

  it('uploads the file as multipart file, user and level to the bulk script, with the session key', async () => {
    restoreZone = inZone('UTC');
    const { api, requests } = clientWith(() => ({
      body: { status: 'success', message: 'ok', batchId: 7, total: 3 },
    }));
    const file = new File(['Sno,IMEI1\n1,356938035643809\n'], 'devices.csv', { type: 'text/csv' });
    await expect(
      uploadBatch(api, { script: 'bulkGreyCopy.php', file, user: 'ops@lendlock.com', level: 'level2' }),
    ).resolves.toEqual({ status: 'success', message: 'ok', batchId: 7, total: 3 });
    expect(requests).toEqual([
      {
        path: '/api/bulkGreyCopy.php',
        headers: expect.objectContaining({ 'X-API-Key': 'token-1' }),
        body: { file: 'file:devices.csv', user: 'ops@lendlock.com', level: 'level2', timeZone: 'UTC' },
      },
    ]);
    // The browser sets the multipart boundary itself.
    expect(requests[0]?.headers['Content-Type']).toBeUndefined();

    await uploadBatch(api, { script: 'bulkLockCopy.php', file, user: 'ops@lendlock.com' });
    expect(requests[1]).toMatchObject({
      path: '/api/bulkLockCopy.php',
      body: { file: 'file:devices.csv', user: 'ops@lendlock.com', timeZone: 'UTC' },
    });
  });

  it('reads progress, the current batch and the batch actions from /api/v2/batch/', async () => {
    const { api, requests } = clientWith((path) => ({
      body: { status: 'success', batch: path.endsWith('/current') ? null : progress },
    }));
    await expect(fetchBatchProgress(api, 7)).resolves.toEqual(progress);
    await expect(fetchCurrentBatch(api, 'lockfiles')).resolves.toBeNull();
    await pauseBatch(api, 7);
    await resumeBatch(api, 7);
    await cancelBatch(api, 7);
    expect(requests.map((r) => [r.path, r.body])).toEqual([
      ['/api/v2/batch/progress', { batchId: 7 }],
      ['/api/v2/batch/current', { statusOf: 'lockfiles' }],
      ['/api/v2/batch/pause', { batchId: 7 }],
      ['/api/v2/batch/resume', { batchId: 7 }],
      ['/api/v2/batch/cancel', { batchId: 7 }],
    ]);
  });

  it('reads every result in pages, each after the last S.No. seen, and stops at the total', async () => {
    const pagesOf = (all: BatchResult[]) =>
      clientWith((_path, body) => {
        const { offset, limit } = body as { offset: number; limit: number };
        const items = all.filter((r) => r.sno > offset).slice(0, limit);
        return { body: { status: 'success', items, total: all.length } };
      });
    const five = Array.from({ length: 5 }, (_, i) => result(i + 1));
    const odd = pagesOf(five);
    await expect(fetchAllBatchResults(odd.api, 7, { pageSize: 2 })).resolves.toEqual(five);
    expect(odd.requests.map((r) => r.body)).toEqual([
      { batchId: 7, offset: 0, limit: 2 },
      { batchId: 7, offset: 2, limit: 2 },
      { batchId: 7, offset: 4, limit: 2 },
    ]);
    // A last page that is full ends the reading too: no call for an empty page.
    const even = pagesOf(five.slice(0, 4));
    await expect(fetchAllBatchResults(even.api, 7, { pageSize: 2 })).resolves.toHaveLength(4);
    expect(even.requests).toHaveLength(2);
  });

  it("an upload refused says the server's message; anything else 'An error occurred while uploading the file.'", () => {
    expect(uploadFailureText(new ApiError(400, { status: 'error', message: MESSAGES.csvIncorrect }))).toBe(
      MESSAGES.csvIncorrect,
    );
    expect(uploadFailureText(new ApiError(502, null))).toBe(MESSAGES.uploadError);
    expect(uploadFailureText(new NetworkError(new TypeError('offline')))).toBe(MESSAGES.uploadError);
    expect(uploadFailureText(new Error('bad reply'))).toBe(MESSAGES.uploadError);
  });
});

describe('a batch upload when the session is lost', () => {
  it('ends the session with the reason and notes the upload as not sent', async () => {
    const { api, end } = fileApi(
      new Response(
        JSON.stringify({
          status: 'error',
          code: 'UNAUTHENTICATED',
          message: MESSAGES.authorizationFailed,
          reason: 'ended_by_admin',
        }),
        { status: 401 },
      ),
    );
    const file = new File(['imei\n356000000000001\n'], 'devices.csv', { type: 'text/csv' });
    const sending = 'Lock batch of devices.csv';
    const error = await uploadBatch(api, {
      script: 'bulkLockCopy.php',
      file,
      user: 'ops@lendlock.com',
      sending,
    }).catch((e: unknown) => e);
    expect(isSessionLost(error)).toBe(true);
    expect(end).toHaveBeenCalledWith({ reason: 'ended_by_admin', notSent: sending });
  });
});
