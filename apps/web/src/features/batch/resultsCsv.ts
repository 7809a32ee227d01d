/**
 * The batch downloads (spec §9): imei_data.csv (S.No., IMEI, Status) for the IMEI commands; for Notify a
 * CSV named after the uploaded file with S.No, Name, IMEI1, Amount, Date, Template, My Header,
 * Notification, Device Available; on Set Wallpaper the processed IMEIs as `{file}_processed.csv`.
 * Every cell is neutralised against spreadsheet formulas, as incorrect_data.csv is.
 */
import { type BatchResult, FORMULA_START, loadPapa } from '@lendlock/contract';
import type { BatchKind } from './batchRules';

export const IMEI_RESULTS_FILE_NAME = 'imei_data.csv';
export const IMEI_RESULTS_COLUMNS = ['S.No.', 'IMEI', 'Status'] as const;
export const NOTIFY_RESULTS_COLUMNS = [
  'S.No',
  'Name',
  'IMEI1',
  'Amount',
  'Date',
  'Template',
  'My Header',
  'Notification',
  'Device Available',
] as const;

/** The Device Available cell of a Notify result. */
export const deviceAvailable = (result: Pick<BatchResult, 'validate'>): string =>
  result.validate === 'found' ? 'Yes' : 'No';

const stem = (fileName: string) => fileName.replace(/\.csv$/i, '') || 'batch';

/** imei_data.csv, or for Notify the uploaded file's own name (a .csv one). */
export function resultsFileName(kind: BatchKind, uploadedFileName: string | null): string {
  if (kind === 'imei') return IMEI_RESULTS_FILE_NAME;
  return `${stem(uploadedFileName ?? '')}.csv`;
}

/** Set Wallpaper's list of already-processed IMEIs: `reminders.csv` → `reminders_processed.csv`. */
export function processedFileName(uploadedFileName: string | null): string {
  return `${stem(uploadedFileName ?? '')}_processed.csv`;
}

/** The rows the server has decided (found or not found), in S.No. order. */
export function processedResults(results: readonly BatchResult[]): BatchResult[] {
  return results.filter((result) => result.validate !== null);
}

function rowsOf(kind: BatchKind, results: readonly BatchResult[]): (string | number)[][] {
  if (kind === 'imei') return results.map((r) => [r.sno, r.imei, r.validate ?? '']);
  return results.map((r) => [
    r.sno,
    r.name ?? '',
    r.imei,
    r.amount ?? '',
    r.date ?? '',
    r.template ?? '',
    r.header ?? '',
    r.notification ?? '',
    deviceAvailable(r),
  ]);
}

/** The text of a results CSV (CRLF line ends, fields quoted where CSV needs it). */
export async function resultsCsv(kind: BatchKind, results: readonly BatchResult[]): Promise<string> {
  const Papa = await loadPapa();
  return Papa.unparse(
    {
      fields: [...(kind === 'imei' ? IMEI_RESULTS_COLUMNS : NOTIFY_RESULTS_COLUMNS)],
      data: rowsOf(kind, results),
    },
    { escapeFormulae: FORMULA_START, newline: '\r\n' },
  );
}
