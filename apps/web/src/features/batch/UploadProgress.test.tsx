// @vitest-environment happy-dom
/**
 * While a batch CSV uploads, the batch panel shows how much of it was sent, as a named
 * progress bar and as MB and percent, from the client's upload progress; the batch's own progress takes
 * its place once the server answered. The fake client reports the bytes sent and holds the upload open.
 */
import {
  type BatchProgress,
  type CommandDefinition,
  commandForScreen,
  validateImeiCsv,
} from '@lendlock/contract';
import { act, cleanup, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ApiCallOptions } from '../../api/client';
import type { UploadProgress as Sent } from '../../api/xhrFetch';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices } from '../../test/render';
import { BatchPanel } from './BatchPanel';
import { BATCH_LABELS } from './labels';
import { uploadPercent } from './UploadProgress';

vi.mock('./validateInWorker', () => ({
  validateInWorker: async (file: File) => {
    const result = await validateImeiCsv(file);
    return {
      total: result.total,
      validCount: result.valid.length,
      invalid: result.invalid,
      invalidCount: result.invalidCount,
      note: result.note,
      rows: [],
    };
  },
}));

const LOCK = commandForScreen('lockDevice') as CommandDefinition;
const MB = 1024 * 1024;

const running: BatchProgress = {
  batchId: 42,
  statusOf: 'lockfiles',
  command: 'LOCK',
  batchfilename: 'locks.csv',
  isComplete: 'incomplete',
  phase: 'running',
  lastimei: null,
  total: 2,
  valid: 2,
  invalid: 0,
  found: 0,
  notFound: 0,
  processed: 0,
  createdAt: '2030-01-01T00:00:00.000Z',
  startedAt: '2030-01-01T00:00:00.000Z',
  completedAt: null,
  elapsedMs: 0,
  pausedReason: null,
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('upload progress', () => {
  it('shows the bytes sent and the percent while the file uploads, then the batch progress', async () => {
    vi.stubGlobal('alert', vi.fn());
    const { api, calls } = fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch: null };
      if (script === 'bulkLockCopy') return { status: 'success', message: 'Uploaded', batchId: 42, total: 2 };
      if (script === 'v2/batch/progress') return { status: 'success', batch: running };
      throw new Error(`unexpected call ${script}`);
    });
    // The upload reports what the test says it sent and answers when the test lets it.
    let report: ((sent: Sent) => void) | undefined;
    let finish: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const call = api.call.bind(api);
    api.call = async <T,>(script: string, options: ApiCallOptions<T> = {}): Promise<T> => {
      if (script === 'bulkLockCopy') {
        report = options.onUploadProgress;
        await answered;
      }
      return call(script, options);
    };

    const { container } = renderWithServices(<BatchPanel definition={LOCK} />, { api });
    await screen.findByText(BATCH_LABELS.title);
    const input = container.querySelector('input[type="file"]') as HTMLInputElement;
    const csv = 'Sno,IMEI1\r\n1,356938035643809\r\n2,356938035643817\r\n';
    await userEvent.setup().upload(input, new File([csv], 'locks.csv', { type: 'text/csv' }));

    // Before the first progress event: nothing sent yet, of the file's size.
    const bar = await screen.findByRole('progressbar', { name: BATCH_LABELS.uploadProgress });
    expect(bar.getAttribute('aria-valuenow')).toBe('0');
    expect(screen.getByTestId('upload-progress').textContent).toBe(`0 B of ${csv.length} B sent (0%)`);
    expect(report).toBeTypeOf('function');

    act(() => report?.({ loaded: 2.5 * MB, total: 5 * MB }));
    await waitFor(() => expect(bar.getAttribute('aria-valuenow')).toBe('50'));
    expect(screen.getByTestId('upload-progress').textContent).toBe('2.5 MB of 5.0 MB sent (50%)');

    act(() => report?.({ loaded: 5 * MB, total: 5 * MB }));
    await waitFor(() => expect(bar.getAttribute('aria-valuenow')).toBe('100'));
    expect(screen.getByTestId('upload-progress').textContent).toBe('5.0 MB of 5.0 MB sent (100%)');

    // The server answered: the upload's bar gives way to the batch's own progress.
    finish();
    expect((await screen.findByTestId('batch-progress')).textContent).toBe('0 / 2 processed');
    expect(screen.queryByRole('progressbar', { name: BATCH_LABELS.uploadProgress })).toBeNull();
    expect(screen.queryByTestId('upload-progress')).toBeNull();
    const upload = calls.find((c) => c.script === 'bulkLockCopy');
    expect((upload?.options.body as FormData | undefined)?.get('file')).toBeInstanceOf(File);
  });

  it('reads whole percents, never above 100, and 0 before the size is known', () => {
    expect(uploadPercent({ loaded: 0, total: 0 })).toBe(0);
    expect(uploadPercent({ loaded: 999, total: 1000 })).toBe(99);
    expect(uploadPercent({ loaded: 1000, total: 1000 })).toBe(100);
    expect(uploadPercent({ loaded: 1200, total: 1000 })).toBe(100);
  });
});
