/**
 * Process on the resume card: on Set Wallpaper the already-processed IMEIs are first saved as
 * `{file}_processed.csv` ('No data to download.' when there are none); then the batch resumes after its
 * last processed IMEI, unless that IMEI is not among its processed results ('This batch cannot be
 * processed, please start a new batch or cancel this batch').
 */
import { type BatchProgress, MESSAGES } from '@lendlock/contract';
import { fetchAllBatchResults, fetchBatchProgress, fetchBatchResults, resumeBatch } from '../../api/batches';
import type { ApiClient } from '../../api/client';
import { downloadText } from '../csv/download';
import { canResume, lastImeiWindow, type ResumeOptions } from './batchRules';
import { processedFileName, processedResults, resultsCsv } from './resultsCsv';

/** Resolves with the resumed batch, or null when it cannot be resumed (the user was told why). */
export async function processStoppedBatch(
  api: ApiClient,
  batchId: number,
  options: Pick<ResumeOptions, 'processedDownload'>,
): Promise<BatchProgress | null> {
  const batch = await fetchBatchProgress(api, batchId);
  let resumable: boolean;
  if (options.processedDownload) {
    const processed = processedResults(await fetchAllBatchResults(api, batchId));
    if (processed.length === 0) window.alert(MESSAGES.noDataToDownload);
    else downloadText(await resultsCsv('imei', processed), processedFileName(batch.batchfilename));
    resumable = canResume(batch, processed);
  } else {
    // The page that holds the last processed IMEI; the whole batch only if it is not there.
    const near = await fetchBatchResults(api, { batchId, ...lastImeiWindow(batch) });
    resumable = canResume(batch, near.items) || canResume(batch, await fetchAllBatchResults(api, batchId));
  }
  if (!resumable) {
    window.alert(MESSAGES.batchCannotResume);
    return null;
  }
  return resumeBatch(api, batchId);
}
