/** Pure helpers of the CSV upload: what a validation result means for the screen, and the file facts shown. */

/** invalid: list the errors and offer incorrect_data.csv; empty: passes with nothing to process; valid: go on. */
export type CsvOutcome = 'invalid' | 'empty' | 'valid';

/** From the validator's result, or from counts (`validCount`) when the valid rows stayed in a worker. */
export function csvOutcome(
  result: { invalid: readonly unknown[] } & ({ valid: readonly unknown[] } | { validCount: number }),
): CsvOutcome {
  if (result.invalid.length > 0) return 'invalid';
  const valid = 'validCount' in result ? result.validCount : result.valid.length;
  return valid === 0 ? 'empty' : 'valid';
}

/** The file's size in KB, two decimals, as the batch panel shows it. */
export function formatSizeKb(bytes: number): string {
  return `${(bytes / 1024).toFixed(2)} KB`;
}

/** A duration in whole milliseconds (spec: reading and processing times are shown in ms). */
export function formatMs(ms: number): string {
  return `${Math.max(0, Math.round(ms))} ms`;
}

/** How many invalid rows the screen lists (incorrect_data.csv has them all). */
export const INVALID_ROWS_SHOWN = 500;
