/**
 * The financed-IMEI CSV (`POST /api/v2/financedImeis/upload`), read as it streams in with the contract's
 * CSV parser. The file used to be buffered whole, decoded into a second copy, then parsed into row
 * objects: several times the upload limit in memory. Now only the IMEIs are kept, at most BATCH_MAX_ROWS
 * of them (the batch limit: the same size of file), and nothing is written to disk. A refused file
 * (too large, too many rows, a bad row, no imei1 column) changes nothing.
 */
import type { Readable } from 'node:stream';
import { MESSAGES, parseCsvRows } from '@lendlock/contract';
import { authorize } from '../../authz';
import { AppError, badRequest, forbidden } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { UPLOAD_MESSAGES } from '../../lib/upload';

export const FINANCED_MESSAGES = {
  noColumn: 'The CSV needs an imei1 column.',
  badRow: (line: number) => `Line ${line}: ${MESSAGES.invalidImeiLength}`,
  retailer: "The financed list is the lender's: a retailer user cannot change it.",
} as const;

/**
 * The financed list is the lender's, across every retailer: an import decides Match_Status of any
 * retailer's devices, and its answer (how many IMEIs were new) tells whether any IMEI is financed. So a
 * user with a retailer phone may not import.
 */
export function assertMayImportFinanced(actor: Principal): void {
  authorize(actor, 'devices', 'importFinanced', 'financed', () => forbidden(FINANCED_MESSAGES.retailer));
}

const IMEI = /^\d{15}$/;

/** The distinct IMEIs of a financed-IMEI CSV (a header naming `imei1` or `imei`, any other columns). */
export async function readFinancedCsv(source: Readable, maxRows: number): Promise<string[]> {
  const imeis = new Set<string>();
  let column = -1;
  let header = true;
  let line = 0;
  let rows = 0;
  let firstBad: number | null = null;
  try {
    await parseCsvRows(source, (chunk) => {
      for (const row of chunk) {
        line++;
        if (header) {
          header = false;
          const names = row.map((cell) =>
            cell
              .replace(/^\uFEFF/, '')
              .trim()
              .toLowerCase(),
          );
          column = names.findIndex((name) => name === 'imei1' || name === 'imei');
          continue;
        }
        if (column < 0 || row.every((cell) => cell.trim() === '')) continue; // a blank line
        rows++;
        // Past the first bad row or the row limit the file is refused: read on, keep nothing.
        if (firstBad !== null || rows > maxRows) continue;
        const imei = (row[column] ?? '').trim();
        if (IMEI.test(imei)) imeis.add(imei);
        else firstBad = line;
      }
    });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE')
      throw new AppError(413, 'PAYLOAD_TOO_LARGE', UPLOAD_MESSAGES.tooLarge);
    throw error;
  }
  if ((source as { truncated?: boolean }).truncated)
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', UPLOAD_MESSAGES.tooLarge);
  if (column < 0) throw badRequest(FINANCED_MESSAGES.noColumn);
  if (rows > maxRows) throw badRequest(UPLOAD_MESSAGES.tooManyRows(maxRows));
  if (firstBad !== null) throw badRequest(FINANCED_MESSAGES.badRow(firstBad));
  return [...imeis];
}
