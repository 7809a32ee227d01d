// @vitest-environment happy-dom
/**
 * The batch card as the operator sees it, rendered with Testing Library over a fake API
 * client: a valid CSV uploaded with the bulk script and followed under the executing overlay (Pause
 * calls the server), a refused upload alerted with the server's message, and an incomplete batch shown
 * as the resume card on opening (New Batch discards it). The file is validated in-thread here, with the
 * contract's validator the Web Worker runs.
 */
import {
  type BatchProgress,
  type CommandDefinition,
  commandForScreen,
  MESSAGES,
  validateImeiCsv,
} from '@lendlock/contract';
import { cleanup, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import { BatchPanel } from './BatchPanel';
import { BATCH_LABELS } from './labels';

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

const batch = (overrides: Partial<BatchProgress> = {}): BatchProgress => ({
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
  ...overrides,
});

const CSV = 'Sno,IMEI1\r\n1,356938035643809\r\n2,356938035643817\r\n';

let alert: ReturnType<typeof vi.fn>;
beforeEach(() => {
  alert = vi.fn();
  vi.stubGlobal('alert', alert);
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

async function chooseCsv(container: HTMLElement, text = CSV) {
  const input = container.querySelector('input[type="file"]') as HTMLInputElement;
  await userEvent.setup().upload(input, new File([text], 'locks.csv', { type: 'text/csv' }));
}

describe('the batch panel', () => {
  it('uploads a valid CSV with the bulk script, shows the executing overlay, and Pause asks the server', async () => {
    const running = batch();
    const { api, calls } = fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch: null };
      if (script === 'bulkLockCopy') return { status: 'success', message: 'Uploaded', batchId: 42, total: 2 };
      if (script === 'v2/batch/progress') return { status: 'success', batch: running };
      if (script === 'v2/batch/pause')
        return { status: 'success', batch: { ...running, phase: 'paused', processed: 1 } };
      throw new Error(`unexpected call ${script}`);
    });
    const { container } = renderWithServices(<BatchPanel definition={LOCK} />, { api });
    expect(await screen.findByText(BATCH_LABELS.title)).toBeTruthy();

    await chooseCsv(container);
    expect(await screen.findByText(MESSAGES.executingBatch)).toBeTruthy();
    const upload = calls.find((c) => c.script === 'bulkLockCopy')?.options.body as FormData;
    expect((upload.get('file') as File).name).toBe('locks.csv');
    expect(upload.get('user')).toBe(TEST_SESSION.email);
    expect(calls.find((c) => c.script === 'v2/batch/progress')?.options.body).toEqual({ batchId: 42 });

    expect((await screen.findByTestId('batch-progress')).textContent).toBe('0 / 2 processed');
    await userEvent.setup().click(await screen.findByRole('button', { name: BATCH_LABELS.pause }));
    await waitFor(() =>
      expect(calls.find((c) => c.script === 'v2/batch/pause')?.options.body).toEqual({ batchId: 42 }),
    );
    expect(alert).not.toHaveBeenCalled();
  });

  it("alerts a refused upload with the server's message and shows it on the card", async () => {
    const { api } = fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch: null };
      if (script === 'bulkLockCopy')
        throw new ApiError(400, { status: 'error', message: 'A batch of this feature is running.' });
      throw new Error(`unexpected call ${script}`);
    });
    const { container } = renderWithServices(<BatchPanel definition={LOCK} />, { api });
    await screen.findByText(BATCH_LABELS.title);
    await chooseCsv(container);
    await waitFor(() => expect(alert).toHaveBeenCalledWith('A batch of this feature is running.'));
    expect((await screen.findByTestId('upload-error')).textContent).toBe(
      'A batch of this feature is running.',
    );
  });

  it("lists the rows the server refused as the browser's own, in place of the counts, and in incorrect_data.csv", async () => {
    const serverRow = {
      line: 3,
      error: 'Invalid IMEI (not in the financed list)',
      data: '2,356938035643817',
    };
    const { api } = fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch: null };
      if (script === 'bulkLockCopy')
        throw new ApiError(400, {
          status: 'error',
          code: 'VALIDATION_FAILED',
          message: MESSAGES.csvIncorrect,
          invalid: [serverRow],
          invalidCount: 1,
        });
      throw new Error(`unexpected call ${script}`);
    });
    const saved: Blob[] = [];
    vi.spyOn(URL, 'createObjectURL').mockImplementation((blob) => {
      saved.push(blob as Blob);
      return 'blob:x';
    });
    const { container } = renderWithServices(<BatchPanel definition={LOCK} />, { api });
    await screen.findByText(BATCH_LABELS.title);
    await chooseCsv(container);
    const errors = await screen.findByTestId('csv-errors');
    expect(errors.textContent).toContain(MESSAGES.csvIncorrect);
    expect(screen.getByTestId('invalid-rows').textContent).toContain(serverRow.error);
    // The browser's "Valid: 2 · Invalid: 0" no longer stands above the server's answer.
    expect(screen.queryByTestId('csv-counts')).toBeNull();
    expect(screen.queryByTestId('upload-error')).toBeNull();
    expect(alert).not.toHaveBeenCalled();
    await userEvent.setup().click(screen.getByRole('button', { name: /incorrect/i }));
    await waitFor(() => expect(saved).toHaveLength(1));
    const csv = await (saved[0] as Blob).text();
    expect(csv).toContain(serverRow.error);
    expect(csv).toContain(serverRow.data);
  });

  it('shows an incomplete batch as the resume card on opening, and New Batch discards it', async () => {
    const stopped = batch({ phase: 'paused', lastimei: '356938035643809', processed: 1 });
    const { api, calls } = fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch: stopped };
      if (script === 'v2/batch/progress') return { status: 'success', batch: stopped };
      if (script === 'v2/batch/cancel')
        return { status: 'success', batch: { ...stopped, phase: 'cancelled', isComplete: 'cancelled' } };
      throw new Error(`unexpected call ${script}`);
    });
    const { container } = renderWithServices(<BatchPanel definition={LOCK} />, { api });
    expect(await screen.findByText(MESSAGES.incompleteBatch)).toBeTruthy();
    expect(screen.getByTestId('resume-file').textContent).toBe('File Name: locks.csv');
    expect(screen.getByTestId('resume-last-imei').textContent).toBe('Last processed IMEI: 356938035643809');

    await userEvent.setup().click(screen.getByRole('button', { name: BATCH_LABELS.newBatch }));
    await waitFor(() => expect(screen.queryByTestId('resume-card')).toBeNull());
    expect(calls.find((c) => c.script === 'v2/batch/cancel')?.options.body).toEqual({ batchId: 42 });
    expect(container.querySelector('input[type="file"]')).not.toBeNull();
  });
});
