import { type BatchProgress, type BatchResult, MESSAGES } from '@lendlock/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiClient } from '../../api/client';
import { noFile } from '../../test/fakeApi';
import { downloadText } from '../csv/download';
import { processStoppedBatch } from './resumeBatch';

vi.mock('../csv/download', () => ({ downloadText: vi.fn() }));

const progress = (over: Partial<BatchProgress> = {}): BatchProgress => ({
  batchId: 3,
  statusOf: 'setWallpaperfiles',
  command: 'LOCKWALLPAPER',
  batchfilename: 'wallpapers.csv',
  isComplete: 'incomplete',
  phase: 'paused',
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
  ...over,
});

const result = (sno: number, validate: BatchResult['validate']): BatchResult => ({
  sno,
  imei: String(356938035643800 + sno),
  validate,
  note: null,
  transactionId: null,
  name: null,
  amount: null,
  date: null,
  template: null,
  header: null,
  notification: null,
});

/** A client answering the batch calls from `batch` and `results`; records the scripts called. */
function fakeApi(batch: BatchProgress, results: BatchResult[]) {
  const calls: string[] = [];
  const api: ApiClient = {
    async call(script, options = {}) {
      calls.push(script);
      const body = options.body as { offset?: number; limit?: number };
      const reply =
        script === 'v2/batch/results'
          ? {
              status: 'success',
              items: results.filter((r) => r.sno > (body.offset ?? 0)).slice(0, body.limit),
              total: results.length,
            }
          : {
              status: 'success',
              batch: script === 'v2/batch/resume' ? { ...batch, phase: 'running' } : batch,
            };
      return options.parse ? options.parse(reply) : (reply as never);
    },
    file: noFile,
  };
  return { api, calls };
}

const alert = vi.fn();
beforeEach(() => {
  vi.stubGlobal('window', { alert });
});
afterEach(() => {
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('Process on the resume card', () => {
  it('resumes a batch whose last IMEI is among its processed results, reading only the page near it', async () => {
    const results = [result(1, 'found'), result(2, 'not found'), result(3, null)];
    const { api, calls } = fakeApi(progress({ processed: 2, lastimei: results[1]?.imei ?? '' }), results);
    await expect(processStoppedBatch(api, 3, { processedDownload: false })).resolves.toMatchObject({
      phase: 'running',
    });
    expect(calls).toEqual(['v2/batch/progress', 'v2/batch/results', 'v2/batch/resume']);
    expect(alert).not.toHaveBeenCalled();
    expect(downloadText).not.toHaveBeenCalled();
  });

  it("alerts 'This batch cannot be processed…' and does not resume when the last IMEI is not in the batch", async () => {
    const { api, calls } = fakeApi(progress({ processed: 2, lastimei: '999999999999999' }), [
      result(1, 'found'),
      result(2, 'found'),
    ]);
    await expect(processStoppedBatch(api, 3, { processedDownload: false })).resolves.toBeNull();
    expect(alert).toHaveBeenCalledWith(MESSAGES.batchCannotResume);
    expect(calls).not.toContain('v2/batch/resume');
  });

  it('Set Wallpaper saves the processed IMEIs as {file}_processed.csv first, then resumes', async () => {
    const results = [result(1, 'found'), result(2, 'not found'), result(3, null)];
    const { api, calls } = fakeApi(progress({ processed: 2, lastimei: results[1]?.imei ?? '' }), results);
    await processStoppedBatch(api, 3, { processedDownload: true });
    expect(downloadText).toHaveBeenCalledWith(
      ['S.No.,IMEI,Status,Reason', `1,${results[0]?.imei},found,`, `2,${results[1]?.imei},not found,`].join(
        '\r\n',
      ),
      'wallpapers_processed.csv',
    );
    expect(calls.at(-1)).toBe('v2/batch/resume');
  });

  it("Set Wallpaper with nothing processed yet alerts 'No data to download.' and resumes from the start", async () => {
    const { api, calls } = fakeApi(progress(), [result(1, null), result(2, null)]);
    await processStoppedBatch(api, 3, { processedDownload: true });
    expect(alert).toHaveBeenCalledWith(MESSAGES.noDataToDownload);
    expect(downloadText).not.toHaveBeenCalled();
    expect(calls.at(-1)).toBe('v2/batch/resume');
  });
});
