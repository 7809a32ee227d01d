/**
 * Spreadsheet formula injection (design.md §3.5): a cell whose text starts with `=`, `+`, `-` or `@`
 * (or a tab or carriage return, which some spreadsheets skip before reading a formula) is opened as a
 * formula. Every CSV and xlsx the console or the server writes neutralises such cells by prefixing a
 * single quote, so the text shows as typed and never runs.
 */
export const FORMULA_START = /^[=+\-@\t\r]/;

export function neutraliseFormula(value: string): string {
  return FORMULA_START.test(value) ? `'${value}` : value;
}
