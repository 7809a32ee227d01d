/** The reports' files made whole in memory, written by lib/xlsx.ts. */
import { Writable } from 'node:stream';
import { type AuditResponse, auditTables } from '@lendlock/contract';
import { writeXlsx, type XlsxCell } from '../../lib/xlsx';
import { cellValue, dateTimeCells, XLSX_ZLIB_LEVEL } from '../../lib/xlsx-export';

/**
 * The Audit Report By IMEI as an xlsx file: one sheet per section, headers first, date-times as
 * date cells in `timeZone` (the screen shows them in the browser's), S.No. as numbers (`auditTables`, the
 * contract's one definition of the report). A report holds at most a few thousand rows, so the file is
 * made whole, in memory, before it is sent.
 */
export async function auditReportXlsx(
  audit: Omit<AuditResponse, 'status'>,
  timeZone: string,
): Promise<Buffer> {
  const at = dateTimeCells(timeZone);
  const tables = auditTables<XlsxCell>(audit, at, (n) => n);
  const sheets = tables.map((table) => ({
    name: table.sheet,
    rows: [table.header, ...table.rows].map((row) => row.map(cellValue)),
  }));
  const chunks: Buffer[] = [];
  const output = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await writeXlsx(output, sheets, { zlibLevel: XLSX_ZLIB_LEVEL });
  return Buffer.concat(chunks);
}
