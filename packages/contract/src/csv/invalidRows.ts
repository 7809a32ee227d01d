/**
 * Bounds on what an error report of a batch CSV echoes back. A hostile or broken file can have a single
 * 90 MB line, or a million bad rows. Echoed whole, that made the server's answer as large as the file
 * and doubled its memory. So a report keeps at most the first `MAX_INVALID_ROWS` bad rows and counts the
 * others, and it quotes at most `MAX_ROW_DATA_CHARS` characters of a row. The truncation shows in what a
 * user sees: '… (N more characters)' after a cut row, and 'and N more rows' at the end of
 * incorrect_data.csv and of the server's answer. The console and the server validate with the same
 * code, so they report the same rows.
 */
import type { InvalidRow } from './imeiCsv';
import { CUT_MARK, charactersCut } from './stream';

/** The most characters of a bad row that a report quotes. */
export const MAX_ROW_DATA_CHARS = 200;
/** The most bad rows a report lists (the rest are counted). */
export const MAX_INVALID_ROWS = 1000;

export const REPORT_TRUNCATION = {
  moreCharacters: (n: number) => `… (${n.toLocaleString('en-US')} more characters)`,
  moreRows: (n: number) => `and ${n.toLocaleString('en-US')} more rows`,
} as const;

/** Cuts `text` to `max` characters, never between the two halves of a surrogate pair. */
function clip(text: string, max: number): string {
  const end = /[\uD800-\uDBFF]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return text.slice(0, end);
}

/**
 * A row as a report quotes it: its fields joined with commas, cut after `MAX_ROW_DATA_CHARS` characters
 * with the count of the rest. The whole row is never joined, so a huge field is not copied.
 */
export function rowData(row: readonly string[]): string {
  let length = Math.max(0, row.length - 1); // the commas
  for (const field of row) length += field.length;
  // A record cut while it was read (stream.ts) ends with the mark and the count of what was left out.
  const cut = charactersCut(row.at(-1) ?? '');
  if (cut > 0) length += cut - CUT_MARK.length - String(cut).length;
  if (length <= MAX_ROW_DATA_CHARS) return row.join(',');
  let quoted = '';
  for (let i = 0; i < row.length && quoted.length <= MAX_ROW_DATA_CHARS; i++) {
    // Each field is sliced before joining: only what can be quoted is copied.
    const field = (row[i] as string).slice(0, MAX_ROW_DATA_CHARS + 1);
    quoted += i === 0 ? field : `,${field}`;
  }
  // A fresh copy of the characters: a slice would keep the whole (huge) line alive behind it.
  quoted = clip(quoted, MAX_ROW_DATA_CHARS).split('').join('');
  return `${quoted}${REPORT_TRUNCATION.moreCharacters(length - quoted.length)}`;
}

/** Collects the bad rows of a file: the first `MAX_INVALID_ROWS` kept, every one counted. */
export class InvalidRowList {
  readonly rows: InvalidRow[] = [];
  count = 0;

  add(line: number, error: string, row: readonly string[]): void {
    this.count++;
    if (this.rows.length < MAX_INVALID_ROWS) this.rows.push({ line, error, data: rowData(row) });
  }
}
