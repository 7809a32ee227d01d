// @vitest-environment happy-dom
/**
 * A batch's results as the operator reads them, over a fake API client: the first page
 * shows after one results call (never the whole batch first), each not found row with its reason; the
 * Show select asks the server for that selection; Download CSV fetches the server's stream of the same
 * selection; an empty selection says there is nothing to download.
 */
import { type BatchResult, MESSAGES } from '@lendlock/contract';
import { cleanup, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices } from '../../test/render';
import { BatchResults, RESULT_PAGE_ROWS } from './BatchResults';
import { BATCH_LABELS } from './labels';

const row = (sno: number, validate: BatchResult['validate'], note: string | null = null): BatchResult => ({
  sno,
  imei: String(350000000000000 + sno),
  validate,
  note,
  transactionId: null,
  name: null,
  amount: null,
  date: null,
  template: null,
  header: null,
  notification: null,
});

/** A batch of 200,000 rows: every tenth not found, every twentieth of them released. */
const TOTAL = 200_000;
const ROWS = (offset: number, limit: number, keep: (r: BatchResult) => boolean) => {
  const out: BatchResult[] = [];
  for (let sno = offset + 1; sno <= TOTAL && out.length < limit; sno++) {
    const r =
      sno % 10 === 0
        ? row(sno, 'not found', sno % 20 === 0 ? 'released' : 'not registered')
        : row(sno, 'found');
    if (keep(r)) out.push(r);
  }
  return out;
};

let alert: ReturnType<typeof vi.fn>;
beforeEach(() => {
  alert = vi.fn();
  vi.stubGlobal('alert', alert);
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

function server() {
  return fakeApi(
    (script, body) => {
      if (script !== 'v2/batch/results') throw new Error(`unexpected call ${script}`);
      const { offset, limit, filter, reason } = body as {
        offset: number;
        limit: number;
        filter?: string;
        reason?: string;
      };
      const keep = (r: BatchResult) =>
        (filter === undefined || filter === 'all' || (filter === 'found') === (r.validate === 'found')) &&
        (reason === undefined || r.note === reason);
      const total = filter === 'notFound' ? (reason ? TOTAL / 20 : TOTAL / 10) : TOTAL;
      return { status: 'success', items: ROWS(offset, limit, keep), total };
    },
    async () => ({
      blob: new Blob(['\uFEFFS.No.,IMEI,Status,Reason']),
      fileName: 'imei_data.csv',
      totalRows: 1,
    }),
  );
}

const BATCH = { batchId: 7, batchfilename: 'big.csv', phase: 'complete' as const };

describe('the results of a batch', () => {
  it('shows the first page after one call, with the reason beside not found', async () => {
    const { api, calls } = server();
    renderWithServices(<BatchResults batch={BATCH} kind="imei" />, { api });
    const count = await screen.findByTestId('results-count');
    expect(count.textContent).toBe(BATCH_LABELS.shownOf(RESULT_PAGE_ROWS, TOTAL));
    const results = calls.filter((c) => c.script === 'v2/batch/results');
    expect(results[0]?.options.body).toEqual({
      batchId: 7,
      offset: 0,
      limit: RESULT_PAGE_ROWS,
      filter: 'all',
    });
    // Never the whole batch before the first rows: at most the pages the table has scrolled to.
    expect(results.length).toBeLessThan(TOTAL / RESULT_PAGE_ROWS);
    const headers = [...document.querySelectorAll('[data-testid="batch-results"] th')].map(
      (th) => th.textContent,
    );
    expect(headers).toEqual([BATCH_LABELS.sno, BATCH_LABELS.imei, BATCH_LABELS.status, BATCH_LABELS.reason]);
  });

  it('asks the server for the chosen selection, and downloads that selection as its CSV', async () => {
    const { api, calls, files } = server();
    renderWithServices(<BatchResults batch={BATCH} kind="imei" />, { api });
    await screen.findByTestId('results-count');
    const user = userEvent.setup();
    await user.selectOptions(screen.getByTestId('results-filter'), BATCH_LABELS.filterReason('released'));
    await waitFor(() =>
      expect(calls.at(-1)?.options.body).toEqual({
        batchId: 7,
        offset: 0,
        limit: RESULT_PAGE_ROWS,
        filter: 'notFound',
        reason: 'released',
      }),
    );
    await waitFor(() =>
      expect(screen.getByTestId('results-count').textContent).toBe(
        BATCH_LABELS.shownOf(RESULT_PAGE_ROWS, TOTAL / 20),
      ),
    );
    await user.click(screen.getByRole('button', { name: BATCH_LABELS.downloadCsv }));
    await waitFor(() => expect(files).toEqual(['v2/batch/export?batchId=7&filter=notFound&reason=released']));
    expect(alert).not.toHaveBeenCalled();
  });

  it("says 'No data to download.' for a selection without rows, and fetches no file", async () => {
    const { api, files } = fakeApi(() => ({ status: 'success', items: [], total: 0 }));
    renderWithServices(<BatchResults batch={BATCH} kind="imei" />, { api });
    expect((await screen.findByText(BATCH_LABELS.noRows)).textContent).toBe(BATCH_LABELS.noRows);
    await userEvent.setup().click(screen.getByRole('button', { name: BATCH_LABELS.downloadCsv }));
    expect(alert).toHaveBeenCalledWith(MESSAGES.noDataToDownload);
    expect(files).toEqual([]);
  });
});
