/**
 * The batch downloads (with the reason beside 'not found'): imei_data.csv (S.No.,
 * IMEI, Status, Reason) for the IMEI commands; for Notify a CSV named after the uploaded file with S.No,
 * Name, IMEI1, Amount, Date, Template, My Header, Notification, Device Available, Reason. The server
 * streams them (`exportBatchResults`); the console writes only Set Wallpaper's `{file}_processed.csv`
 * itself, from the contract's one definition of the files (`resultsCsvText`). Every cell is neutralised
 * against spreadsheet formulas, as incorrect_data.csv is.
 */
import { type BatchKind, type BatchResult, resultsCsvText } from '@lendlock/contract';

export {
  IMEI_RESULTS_COLUMNS,
  IMEI_RESULTS_FILE_NAME,
  NOTIFY_RESULTS_COLUMNS,
  processedFileName,
  resultsFileName,
} from '@lendlock/contract';

/** The rows the server has decided (found or not found), in S.No. order. */
export function processedResults(results: readonly BatchResult[]): BatchResult[] {
  return results.filter((result) => result.validate !== null);
}

/** The text of a results CSV with its header (CRLF line ends, fields quoted where CSV needs it). */
export function resultsCsv(kind: BatchKind, results: readonly BatchResult[]): Promise<string> {
  return resultsCsvText(kind, results, { header: true });
}
