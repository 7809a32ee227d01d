import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { CSV_LABELS } from './labels';
import { csvOutcome, formatMs, formatSizeKb } from './outcome';

describe('csvOutcome', () => {
  it('is invalid with any invalid row, even beside valid ones', () => {
    const invalid = [{ line: 3, error: MESSAGES.invalidImeiLength, data: '2,1' }];
    expect(csvOutcome({ valid: ['356938035643809'], invalid })).toBe('invalid');
    expect(csvOutcome({ valid: [], invalid })).toBe('invalid');
  });

  it('is empty with no rows at all (nothing to process) and valid otherwise', () => {
    expect(csvOutcome({ valid: [], invalid: [] })).toBe('empty');
    expect(csvOutcome({ valid: ['356938035643809'], invalid: [] })).toBe('valid');
  });
});

describe('file facts', () => {
  it('shows the size in KB with two decimals and times in whole ms', () => {
    expect(formatSizeKb(0)).toBe('0.00 KB');
    expect(formatSizeKb(1536)).toBe('1.50 KB');
    expect(formatSizeKb(20_971_520)).toBe('20480.00 KB');
    expect(formatMs(12.6)).toBe('13 ms');
    expect(formatMs(-1)).toBe('0 ms');
  });
});

describe('the note under a long list of invalid rows', () => {
  it('says incorrect_data.csv lists them all, or the first 1,000 of a file with more', () => {
    expect(CSV_LABELS.showingFirst(500, 800, 800)).toBe(
      'Showing the first 500 of 800 invalid rows; incorrect_data.csv lists them all.',
    );
    expect(CSV_LABELS.showingFirst(500, 250_000, 1000)).toBe(
      'Showing the first 500 of 250,000 invalid rows; incorrect_data.csv lists the first 1,000 and counts the rest.',
    );
  });
});
