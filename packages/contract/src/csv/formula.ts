/**
 * Spreadsheet formula injection: a CSV cell whose text starts with `=`, `+`, `-` or `@`
 * (or a tab or carriage return, which some spreadsheets skip before reading a formula) is opened as a
 * formula. Every CSV the console or the server writes gives this rule to Papa.unparse (`escapeFormulae`),
 * which prefixes such cells with a single quote, so the text shows as typed and never runs. The xlsx
 * exports need no prefix: their text is in string cells, which a spreadsheet shows as typed and never
 * evaluates (apps/server/src/lib/xlsx.ts).
 */
export const FORMULA_START = /^[=+\-@\t\r]/;
