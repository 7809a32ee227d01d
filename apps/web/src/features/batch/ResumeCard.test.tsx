// @vitest-environment happy-dom
/**
 * The resume card as the operator sees it: 'Incomplete Batch Available' with the file name
 * and the last processed IMEI, the server's reason when it paused the batch itself, Cancel only where
 * the feature offers it (not on Notify or Set Wallpaper); and, in the batch panel over a fake API
 * client, Process resuming after the last processed IMEI — or alerting 'This batch cannot be
 * processed…' and resuming nothing when that IMEI is not among the processed results.
 */
import {
  type BatchProgress,
  type BatchResult,
  type CommandDefinition,
  commandForScreen,
  MESSAGES,
} from '@lendlock/contract';
import { MantineProvider } from '@mantine/core';
import { cleanup, render, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices } from '../../test/render';
import { BatchPanel } from './BatchPanel';
import { resumeOptions } from './batchRules';
import { BATCH_LABELS } from './labels';
import { ResumeCard } from './ResumeCard';

const LAST = '356938035643809';

const stopped = (overrides: Partial<BatchProgress> = {}): BatchProgress => ({
  batchId: 7,
  statusOf: 'lockfiles',
  command: 'LOCK',
  batchfilename: 'locks.csv',
  isComplete: 'incomplete',
  phase: 'paused',
  lastimei: LAST,
  total: 3,
  valid: 3,
  invalid: 0,
  found: 1,
  notFound: 0,
  processed: 1,
  createdAt: '2030-01-01T00:00:00.000Z',
  startedAt: '2030-01-01T00:00:00.000Z',
  completedAt: null,
  elapsedMs: 1200,
  pausedReason: null,
  ...overrides,
});

const result = (imei: string, validate: BatchResult['validate']): BatchResult => ({
  sno: 1,
  imei,
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

const definition = (screenName: string) => commandForScreen(screenName) as CommandDefinition;

let alert: ReturnType<typeof vi.fn>;
beforeEach(() => {
  alert = vi.fn();
  vi.stubGlobal('alert', alert);
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function renderCard(batch: BatchProgress, screenName = 'lockDevice') {
  const handlers = { onProcess: vi.fn(), onCancel: vi.fn(), onNewBatch: vi.fn() };
  render(
    <MantineProvider>
      <ResumeCard batch={batch} options={resumeOptions(definition(screenName))} busy={null} {...handlers} />
    </MantineProvider>,
  );
  return handlers;
}

describe('the resume card', () => {
  it('names the batch, its file and its last processed IMEI, with Process, Cancel and New Batch', async () => {
    const handlers = renderCard(stopped());
    expect(screen.getByRole('heading', { name: MESSAGES.incompleteBatch })).toBeTruthy();
    expect(screen.getByTestId('resume-file').textContent).toBe('File Name: locks.csv');
    expect(screen.getByTestId('resume-last-imei').textContent).toBe(`Last processed IMEI: ${LAST}`);
    expect(screen.getByText('1 / 3 processed')).toBeTruthy();
    expect(screen.queryByTestId('resume-reason')).toBeNull();

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: BATCH_LABELS.process }));
    await user.click(screen.getByRole('button', { name: BATCH_LABELS.cancel }));
    await user.click(screen.getByRole('button', { name: BATCH_LABELS.newBatch }));
    expect(handlers.onProcess).toHaveBeenCalledOnce();
    expect(handlers.onCancel).toHaveBeenCalledOnce();
    expect(handlers.onNewBatch).toHaveBeenCalledOnce();
  });

  it("says 'none yet' before any IMEI was processed, and the server's reason when it paused the batch", () => {
    renderCard(
      stopped({ lastimei: null, processed: 0, pausedReason: "Paused: the owner's account was disabled." }),
    );
    expect(screen.getByTestId('resume-last-imei').textContent).toBe('Last processed IMEI: none yet');
    expect(screen.getByTestId('resume-reason').textContent).toBe("Paused: the owner's account was disabled.");
  });

  it('has no Cancel on Notify and Set Wallpaper', () => {
    renderCard(stopped(), 'setWallpaper');
    expect(screen.queryByRole('button', { name: BATCH_LABELS.cancel })).toBeNull();
    expect(screen.getByRole('button', { name: BATCH_LABELS.process })).toBeTruthy();
  });
});

describe('Process on the resume card', () => {
  function server(results: BatchResult[]) {
    const batch = stopped();
    return fakeApi((script) => {
      if (script === 'v2/batch/current') return { status: 'success', batch };
      if (script === 'v2/batch/progress') return { status: 'success', batch };
      if (script === 'v2/batch/results') return { status: 'success', items: results, total: results.length };
      if (script === 'v2/batch/resume') return { status: 'success', batch: { ...batch, phase: 'running' } };
      throw new Error(`unexpected call ${script}`);
    });
  }

  it('resumes the batch after its last processed IMEI', async () => {
    const { api, calls } = server([result(LAST, 'found')]);
    renderWithServices(<BatchPanel definition={definition('lockDevice')} />, { api });
    await userEvent.setup().click(await screen.findByRole('button', { name: BATCH_LABELS.process }));
    await waitFor(() =>
      expect(calls.find((c) => c.script === 'v2/batch/resume')?.options.body).toEqual({ batchId: 7 }),
    );
    expect(calls.find((c) => c.script === 'v2/batch/results')?.options.body).toMatchObject({
      batchId: 7,
      offset: 0,
    });
    expect(await screen.findByText(MESSAGES.executingBatch)).toBeTruthy();
    expect(alert).not.toHaveBeenCalled();
  });

  it("alerts 'This batch cannot be processed…' and resumes nothing when the last IMEI is not among the results", async () => {
    const { api, calls } = server([result('356938035643817', 'found')]);
    renderWithServices(<BatchPanel definition={definition('lockDevice')} />, { api });
    await userEvent.setup().click(await screen.findByRole('button', { name: BATCH_LABELS.process }));
    await waitFor(() => expect(alert).toHaveBeenCalledWith(MESSAGES.batchCannotResume));
    expect(MESSAGES.batchCannotResume).toBe(
      'This batch cannot be processed, please start a new batch or cancel this batch',
    );
    expect(calls.map((c) => c.script)).not.toContain('v2/batch/resume');
    expect(screen.getByTestId('resume-card')).toBeTruthy();
  });
});
