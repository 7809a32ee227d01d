/**
 * A batch's results as the Batches screen and the batch panel read them: a selection (all,
 * found, not found, or not found for one reason), its count, and the whole selection as the batch
 * screen's CSV (imei_data.csv, or the Notify results named after the uploaded file: the contract's
 * `resultsCsvText`, with the reason beside 'not found'), streamed page by page by S.No. (keyset), so a
 * 200,000-row result is never held in memory, and a client that goes away stops the reading.
 */
import { Readable } from 'node:stream';
import { type BatchKind, type BatchResultSelection, CSV_BOM, resultsCsvText } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { badRequest } from '../../core/errors';
import type { BatchRow, DB } from '../../db/types';
import { toBatchResult } from './mapper';
import { countBatchItems, type ItemSelection, listBatchItems } from './repository';

export const RESULT_MESSAGES = {
  reasonNeedsNotFound: 'A reason selects not found rows: leave the filter at notFound or all.',
} as const;

/** Rows per read of the CSV stream. */
const EXPORT_PAGE_ROWS = 5_000;

/** The rows a selection names; a reason with the filter `found` is refused (400), as it names none. */
export function itemSelection(selection: BatchResultSelection): ItemSelection {
  if (selection.reason !== undefined) {
    if (selection.filter === 'found') throw badRequest(RESULT_MESSAGES.reasonNeedsNotFound);
    return { result: 'not found', note: selection.reason };
  }
  if (selection.filter === 'found') return { result: 'found' };
  if (selection.filter === 'notFound') return { result: 'not found' };
  return {};
}

/**
 * How many rows the selection holds: the batch's own counts (valid rows for all, which counts the rows
 * still to process; found; not found), or for one reason a count of its rows (a partial index, migration
 * 0024).
 */
export async function selectionTotal(
  db: Kysely<DB>,
  batch: Pick<BatchRow, 'id' | 'valid' | 'found' | 'not_found'>,
  selection: ItemSelection,
): Promise<number> {
  if (selection.note !== undefined) return countBatchItems(db, Number(batch.id), selection);
  if (selection.result === 'found') return batch.found;
  if (selection.result === 'not found') return batch.not_found;
  return batch.valid;
}

/**
 * The selection's rows as CSV: the UTF-8 byte order mark and the header line first, then each page of
 * rows read as the response drains (Readable.from waits for the client), CRLF between rows.
 */
export function resultsCsvStream(
  db: Kysely<DB>,
  batchId: number,
  kind: BatchKind,
  selection: ItemSelection,
): Readable {
  async function* lines(): AsyncGenerator<string> {
    yield `${CSV_BOM}${await resultsCsvText(kind, [], { header: true })}`;
    let offset = 0;
    for (;;) {
      const page = await listBatchItems(db, batchId, offset, EXPORT_PAGE_ROWS, selection);
      if (page.length === 0) return;
      yield `\r\n${await resultsCsvText(kind, page.map(toBatchResult), { header: false })}`;
      if (page.length < EXPORT_PAGE_ROWS) return;
      offset = (page.at(-1) as (typeof page)[number]).seq;
    }
  }
  return Readable.from(lines(), { objectMode: false });
}
