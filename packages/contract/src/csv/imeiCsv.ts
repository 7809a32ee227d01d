/**
 * The batch CSV of IMEI commands: the same validator in the console and on the server. Papa Parse streams the
 * file in chunks (a File or Blob in the browser, a Node readable stream or a string anywhere), and a small
 * synchronous core checks the rows as they arrive, so a million-row file never sits in memory as parsed rows.
 *
 * Rules, with the spec's exact messages (MESSAGES):
 * - the file's type is text/csv, or what browsers report for a .csv file (application/vnd.ms-excel, or an
 *   empty type with a .csv name), else 'Only CSV files are allowed.';
 * - header columns 1 and 2 are sno and imei1 (case-insensitive, trimmed), else a single invalid row
 *   {line: 1, error: 'Invalid Headers', data: 'headers not matched'};
 * - each data row has exactly 2 columns, else 'More than two columns found. please check your file';
 * - the IMEI (column 2, trimmed) is exactly 15 digits, else 'Invalid Length found in imei, only 15 digits allowed'.
 * A BOM, CRLF line ends, quoted fields and blank lines (trailing or not, or of commas only) are
 * accepted; `line` is the row's line in the file, the header being line 1. A file with a header and no
 * data rows passes with no IMEIs and says so in `note`. A header that is semicolon- or tab-separated,
 * or a UTF-16 file, gets a row error that says so instead of 'Invalid Headers' (encoding.ts). Rows that
 * repeat an IMEI of an earlier row are counted in `duplicates` (they pass: the screen says so).
 */
import type { UnparseConfig } from 'papaparse';
import { MESSAGES } from '../messages';
import { headerFormatProblem, isBlankRow } from './encoding';
import { FORMULA_START } from './formula';
import { InvalidRowList, REPORT_TRUNCATION } from './invalidRows';
import { type CsvInput, type CsvReadable, loadPapa, parseCsvRows } from './stream';

/** An invalid row, as the error report lists it. */
export interface InvalidRow {
  /** The row's line in the file (the header is line 1). */
  line: number;
  error: string;
  /**
   * The row as it was in the file (its fields joined with commas), at most MAX_ROW_DATA_CHARS of it,
   * followed by '… (N more characters)' when cut.
   */
  data: string;
}

export interface ImeiCsvResult {
  /** The IMEIs of the valid rows, in file order (duplicates kept: the file is reported as it is). */
  valid: string[];
  /** The first MAX_INVALID_ROWS invalid rows, in file order. */
  invalid: InvalidRow[];
  /** Every invalid row of the file, listed or not. */
  invalidCount: number;
  /** Data rows read (the header and blank lines not counted). */
  total: number;
  /** Valid rows whose IMEI an earlier valid row already has (absent when none). */
  duplicates?: number;
  /** Set when the file has no data rows: it passes, and there is nothing to process. */
  note?: string;
}

/** The columns of the batch CSV (as the sample file spells them). */
export const IMEI_CSV_HEADERS = ['Sno', 'IMEI1'] as const;

/** The note of a file that has a header and no data rows. */
export const IMEI_CSV_NO_DATA_NOTE = 'The file has no data rows: there is nothing to process.';

/** MIME types browsers report for a .csv file (Windows with Excel installed says application/vnd.ms-excel). */
export const CSV_MIME_TYPES: readonly string[] = ['text/csv', 'application/vnd.ms-excel'];

/** 'Only CSV files are allowed.' for anything but a CSV file, else null. */
export function csvFileTypeError(file: { readonly name: string; readonly type: string }): string | null {
  const type = file.type.trim().toLowerCase();
  if (CSV_MIME_TYPES.includes(type)) return null;
  if (type === '' && /\.csv$/i.test(file.name.trim())) return null;
  return MESSAGES.onlyCsv;
}

const IMEI = /^\d{15}$/;

/**
 * The synchronous core: feed it the parsed rows in order (any chunking), then read the result.
 * Exposed for callers that already hold rows; `validateImeiCsv` streams a file through it.
 */
export class ImeiCsvValidator {
  private line = 0;
  /** null until the header row was seen. */
  private headerOk: boolean | null = null;
  /** Why the header is not comma-separated UTF-8 (when it did not match). */
  private headerProblem: string | null = null;
  private total = 0;
  private readonly valid: string[] = [];
  private readonly seen = new Set<string>();
  private duplicates = 0;
  private readonly invalid = new InvalidRowList();

  push(rows: readonly (readonly string[])[]): void {
    const { valid, invalid, seen } = this;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as readonly string[];
      const line = ++this.line;
      if (this.headerOk === null) {
        this.headerOk = isHeader(row);
        if (!this.headerOk) this.headerProblem = headerFormatProblem(row);
        continue;
      }
      if (isBlankRow(row)) continue; // a blank line, or commas only
      this.total++;
      if (!this.headerOk) continue; // only counted: the file is refused on its header
      if (row.length !== 2) {
        invalid.add(line, MESSAGES.moreThanTwoColumns, row);
        continue;
      }
      const raw = row[1] as string;
      const imei = raw.length === 15 ? raw : raw.trim();
      if (IMEI.test(imei)) {
        valid.push(imei);
        if (seen.has(imei)) this.duplicates++;
        else seen.add(imei);
      } else invalid.add(line, MESSAGES.invalidImeiLength, row);
    }
  }

  result(): ImeiCsvResult {
    if (this.headerOk !== true) {
      return {
        valid: [],
        invalid: [headerRow(this.headerProblem)],
        invalidCount: 1,
        total: this.total,
      };
    }
    const result: ImeiCsvResult = {
      valid: this.valid,
      invalid: this.invalid.rows,
      invalidCount: this.invalid.count,
      total: this.total,
    };
    if (this.duplicates > 0) result.duplicates = this.duplicates;
    if (this.total === 0) result.note = IMEI_CSV_NO_DATA_NOTE;
    return result;
  }
}

/**
 * The one row of a refused header: 'Invalid Headers' (data 'headers not matched', line 1), or what is
 * wrong with the file's format when that is known (semicolons, tabs, UTF-16).
 */
export function headerRow(problem: string | null): InvalidRow {
  return { line: 1, error: problem ?? MESSAGES.invalidHeaders, data: MESSAGES.headersNotMatched };
}

function isHeader(row: readonly string[]): boolean {
  const sno = (row[0] ?? '')
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase();
  const imei1 = (row[1] ?? '').trim().toLowerCase();
  return sno === 'sno' && imei1 === 'imei1';
}

/** What the validator reads: a File or Blob (browser), a Node readable stream, or the text itself. */
export type CsvSource = CsvInput;
export type ReadableLike = CsvReadable;

export interface ValidateOptions {
  /** Characters (strings) or bytes (files) per chunk; Papa Parse's default for files is 10 MB. */
  chunkSize?: number;
}

/** Validates an IMEI batch CSV (the content; check the file's type with `csvFileTypeError` first). */
export async function validateImeiCsv(
  source: CsvSource,
  options: ValidateOptions = {},
): Promise<ImeiCsvResult> {
  const validator = new ImeiCsvValidator();
  await parseCsvRows(source, (rows) => validator.push(rows), options.chunkSize);
  return validator.result();
}

/** The error report CSV: its file name and columns. */
export const ERROR_REPORT_FILE_NAME = 'incorrect_data.csv';
export const ERROR_REPORT_COLUMNS = ['Sno', 'Incorrect Data', 'Error Message'] as const;

/**
 * The text of incorrect_data.csv: one row per listed invalid row, Sno being its line in the uploaded
 * file, and when the file had more (`invalidCount`) a last row 'and N more rows'. Fields are quoted where
 * CSV needs it, and cells that a spreadsheet would read as a formula are neutralised with a leading
 * single quote.
 */
export async function incorrectDataCsv(
  invalid: readonly InvalidRow[],
  invalidCount: number = invalid.length,
): Promise<string> {
  const Papa = await loadPapa();
  const config: UnparseConfig = { escapeFormulae: FORMULA_START, newline: '\r\n' };
  const data: (string | number)[][] = invalid.map((row) => [row.line, row.data, row.error]);
  if (invalidCount > invalid.length)
    data.push([REPORT_TRUNCATION.moreRows(invalidCount - invalid.length), '', '']);
  return Papa.unparse({ fields: [...ERROR_REPORT_COLUMNS], data }, config);
}
