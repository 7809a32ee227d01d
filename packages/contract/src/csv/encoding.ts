/**
 * What a spreadsheet needs of a CSV download, and what an upload that is not comma-separated UTF-8 is told.
 *
 * Excel reads a CSV without a byte order mark in the machine's legacy code page, so '₹' and names in
 * other scripts showed as mojibake: every CSV the console or the server writes for download starts with
 * the UTF-8 BOM (`withBom`). Excel in many locales saves "CSV" with semicolons, and "Unicode text" is
 * UTF-16: such a file was refused as 'Invalid Headers', which says nothing of the cause. The validators
 * now name the separator or the encoding instead (`headerFormatProblem`).
 */

/** The UTF-8 byte order mark, as a character (a Blob or a UTF-8 encoder writes it as EF BB BF). */
export const CSV_BOM = '\uFEFF';

/** `text` starting with the BOM (once). */
export function withBom(text: string): string {
  return text.startsWith(CSV_BOM) ? text : `${CSV_BOM}${text}`;
}

/** The row error of a header that is not comma-separated UTF-8 (reported instead of 'Invalid Headers'). */
export const CSV_FORMAT_MESSAGES = {
  semicolons: 'The file uses semicolons (;) to separate values: save it as CSV with commas.',
  tabs: 'The file uses tabs to separate values: save it as CSV with commas.',
  utf16: 'The file is UTF-16: save it as CSV UTF-8.',
} as const;

/**
 * Why a header row that did not match is not comma-separated UTF-8, or null. The row is the first record
 * as read (UTF-8): UTF-16 text has a NUL byte beside every ASCII character, and its byte order mark
 * (FF FE or FE FF) is no UTF-8, so it reads as two replacement characters. A semicolon or a tab inside
 * the header's cells is the separator of a file saved that way.
 */
export function headerFormatProblem(row: readonly string[]): string | null {
  const first = row[0] ?? '';
  if (first.startsWith('\uFFFD\uFFFD') || row.some((cell) => cell.includes('\u0000')))
    return CSV_FORMAT_MESSAGES.utf16;
  if (row.some((cell) => cell.includes(';'))) return CSV_FORMAT_MESSAGES.semicolons;
  if (row.some((cell) => cell.includes('\t'))) return CSV_FORMAT_MESSAGES.tabs;
  return null;
}

/** A blank line, or a row of empty (or blank) cells only: what a spreadsheet saves for an empty row. */
export function isBlankRow(row: readonly string[]): boolean {
  for (let i = 0; i < row.length; i++) {
    const cell = row[i] as string;
    if (cell !== '' && cell.trim() !== '') return false;
  }
  return true;
}

/** The summary line's count of rows that repeat an IMEI of an earlier row (shown when there are any). */
export const CSV_SUMMARY_LABELS = {
  duplicates: 'Repeated IMEIs',
} as const;
