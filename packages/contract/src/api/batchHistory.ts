/**
 * The Batches screen: the batches a user may see, newest first, and the files of a batch's
 * results. A finished batch's per-IMEI results stay reachable after its tab is closed: listed with
 * `POST /api/v2/batches` (keyset paging by batch id), read in pages with `/api/v2/batch/results` (filtered
 * by found / not found / reason), and downloaded whole with `GET /api/v2/batch/export`, which the server
 * streams. The results files (imei_data.csv, the Notify results) are written by one definition here, for
 * the server's stream and the console's own `_processed` list alike.
 */
import { z } from 'zod';
import { COMMAND_DEFINITIONS } from '../commands';
import { FORMULA_START } from '../csv/formula';
import { loadPapa } from '../csv/stream';
import type { ScreenName } from '../screens';
import { type BatchResult, batchProgressSchema, batchResultSelectionSchema } from './batches';

/**
 * The screens whose permission runs a batch: a USER holding any of them sees the Batches screen (their
 * own batches of those screens); ADMIN and SUPERADMIN pass every permission.
 */
export const BATCH_SCREENS: readonly ScreenName[] = [
  ...new Set(COMMAND_DEFINITIONS.filter((d) => d.batch).map((d) => d.screen)),
];

/** A page of the batches the caller may see, newest first: those with an id below `before`. */
export const batchListRequestSchema = z.object({
  before: z.coerce.number().int().positive().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  /** One feature only (a command's `statusOf`, or `deviceaction`). */
  statusOf: z.string().min(1).max(64).optional(),
});
export type BatchListRequest = z.input<typeof batchListRequestSchema>;

/** A batch as the Batches screen lists it: its progress, who started it, and through which interface. */
export const batchListItemSchema = batchProgressSchema.extend({
  /** The email of the user who started it (or resumed it after its owner lost standing). */
  owner: z.string(),
  /** B: uploaded or started in the console or by a key's bulk call; A/B for a client-run batch. */
  interface: z.string(),
});
export type BatchListItem = z.infer<typeof batchListItemSchema>;

export const batchListResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(batchListItemSchema),
  /** `before` of the next page, or null when this is the last one. */
  next: z.number().int().nullable(),
});

/** `GET /api/v2/batch/export`: a batch's results (the selection) as the batch screen's CSV. */
export const batchExportQuerySchema = batchResultSelectionSchema.extend({
  batchId: z.coerce.number().int().positive(),
});
export type BatchExportQuery = z.input<typeof batchExportQuerySchema>;

// ---- The results files (with the reason beside 'not found') ----

/** Notify batches take the Notify CSV and give its results file; every other command the IMEI ones. */
export type BatchKind = 'imei' | 'notify';

/** The kind of a batch of raw command `command`. */
export const batchKindOf = (command: string): BatchKind => (command === 'NOTIFY' ? 'notify' : 'imei');

export const IMEI_RESULTS_FILE_NAME = 'imei_data.csv';
export const IMEI_RESULTS_COLUMNS = ['S.No.', 'IMEI', 'Status', 'Reason'] as const;
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
  'Reason',
] as const;

/** The Device Available cell of a Notify result. */
export const deviceAvailable = (result: Pick<BatchResult, 'validate'>): string =>
  result.validate === 'found' ? 'Yes' : 'No';

/** Why a row is not found ('released', 'de-enrolled', 'not registered'); empty for any other row. */
export const resultReason = (result: Pick<BatchResult, 'validate' | 'note'>): string =>
  result.validate === 'not found' ? (result.note ?? '') : '';

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

/** The cells of one result row of a results file. */
export function resultCells(kind: BatchKind, r: BatchResult): (string | number)[] {
  if (kind === 'imei') return [r.sno, r.imei, r.validate ?? '', resultReason(r)];
  return [
    r.sno,
    r.name ?? '',
    r.imei,
    r.amount ?? '',
    r.date ?? '',
    r.template ?? '',
    r.header ?? '',
    r.notification ?? '',
    deviceAvailable(r),
    resultReason(r),
  ];
}

/**
 * Result rows as CSV text (CRLF between rows, fields quoted where CSV needs it, formula cells
 * neutralised), with the header line first when `header`; no line break at the end, so pages join with
 * CRLF. The byte order mark is the caller's (`withBom`, or the server's stream).
 */
export async function resultsCsvText(
  kind: BatchKind,
  results: readonly BatchResult[],
  options: { header: boolean },
): Promise<string> {
  const Papa = await loadPapa();
  const config = { escapeFormulae: FORMULA_START, newline: '\r\n' };
  const rows =
    results.length === 0
      ? ''
      : Papa.unparse(
          results.map((r) => resultCells(kind, r)),
          config,
        );
  if (!options.header) return rows;
  const head = Papa.unparse([[...(kind === 'imei' ? IMEI_RESULTS_COLUMNS : NOTIFY_RESULTS_COLUMNS)]], config);
  return rows === '' ? head : `${head}\r\n${rows}`;
}
