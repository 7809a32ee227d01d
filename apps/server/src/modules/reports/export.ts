/**
 * Streaming xlsx exports (design.md §3.5): rows are read by key in pages and written through ExcelJS's
 * streaming writer straight into the response, so a million-row report runs in bounded memory. Cells
 * that a spreadsheet would read as formulas are neutralised.
 */
import { PassThrough } from 'node:stream';
import { neutraliseFormula } from '@lendlock/contract';
import ExcelJS from 'exceljs';
import type { RowSource } from './sources';

const PAGE = 5000;

/** The workbook writer's options (the export benchmark gives ExcelJS alone the same ones). */
export const XLSX_WRITER_OPTIONS = { useStyles: false, useSharedStrings: false } as const;

export function cellValue(value: unknown): string | number | null {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number') return value;
  return neutraliseFormula(String(value));
}

/** Rows written between two looks at the compressor (see `keepPace`). */
export const PACE_ROWS = 200;

type NeedsDrain = NodeJS.EventEmitter & {
  writableNeedDrain?: boolean;
  _writableState?: { needDrain?: boolean };
};

/**
 * Waits until the zip compressor has taken in what the sheet gave it. ExcelJS hands the sheet's XML to
 * its zip (archiver) without back-pressure, and the compression runs in the thread pool one chunk per
 * turn of the event loop: a writer that does not wait piles a million rows up in memory (half a
 * gigabyte) and compresses them at the end. The sheet's stream pipes into the compressor's input (an
 * archiver PassThrough); while that input is over its high-water mark, this waits for it to drain, and
 * otherwise lets the event loop turn once. Both the export and its benchmark pace ExcelJS this way.
 */
export async function keepPace(sheet: ExcelJS.Worksheet): Promise<void> {
  const input = (sheet as unknown as { stream?: { pipes?: NeedsDrain[] } }).stream?.pipes?.[0];
  if (input && (input.writableNeedDrain ?? input._writableState?.needDrain)) {
    await new Promise((resolve) => input.once('drain', resolve));
  } else {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Writes every row of `source` as one sheet; returns the stream to send and a promise of the row count. */
export function streamXlsx(
  source: RowSource,
  sheetName: string,
): { stream: PassThrough; done: Promise<number> } {
  const stream = new PassThrough();
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream, ...XLSX_WRITER_OPTIONS });
  const sheet = workbook.addWorksheet(sheetName.slice(0, 31));
  const done = (async () => {
    sheet.addRow([...source.columns]).commit();
    let rows = 0;
    let next: ReturnType<RowSource['after']> | null = source.after(0, PAGE);
    while (next) {
      const page: Awaited<ReturnType<RowSource['after']>> = await next;
      // The next page is read while this one is written (the database works beside the writer).
      next = page.last !== null && page.rows.length === PAGE ? source.after(page.last, PAGE) : null;
      // (A failure of the page read ahead is seen when it is awaited, or not at all if the export stops.)
      next?.catch(() => {});
      for (let i = 0; i < page.rows.length; i++) {
        sheet.addRow(source.cells(page.rows[i] as Record<string, unknown>).map(cellValue)).commit();
        if ((i + 1) % PACE_ROWS === 0) await keepPace(sheet);
      }
      rows += page.rows.length;
      // The client went away: nobody to write for.
      if (stream.destroyed) break;
      // Let the response drain before the next page (back-pressure, bounded memory).
      if (stream.writableNeedDrain) await new Promise((resolve) => stream.once('drain', resolve));
    }
    if (stream.destroyed) return rows;
    sheet.commit();
    await workbook.commit();
    return rows;
  })();
  done.catch((error: unknown) => stream.destroy(error as Error));
  return { stream, done };
}
