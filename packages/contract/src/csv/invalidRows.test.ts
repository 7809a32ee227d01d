import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../messages';
import { ERROR_REPORT_COLUMNS, incorrectDataCsv, validateImeiCsv } from './imeiCsv';
import { MAX_INVALID_ROWS, MAX_ROW_DATA_CHARS, REPORT_TRUNCATION, rowData } from './invalidRows';
import { validateNotifyCsv } from './notifyCsv';

describe('what an error report quotes of a bad row', () => {
  it('quotes a short row whole', () => {
    expect(rowData(['1', '123'])).toBe('1,123');
    expect(rowData(['x'.repeat(MAX_ROW_DATA_CHARS)])).toBe('x'.repeat(MAX_ROW_DATA_CHARS));
  });

  it('quotes 200 characters of a longer row and says how many more there were', () => {
    expect(rowData(['1', 'y'.repeat(500)])).toBe(`1,${'y'.repeat(198)}… (302 more characters)`);
    expect(REPORT_TRUNCATION.moreCharacters(94_371_650)).toBe('… (94,371,650 more characters)');
  });

  it('never cuts a surrogate pair in half', () => {
    const data = rowData([`${'a'.repeat(MAX_ROW_DATA_CHARS - 1)}😀${'b'.repeat(10)}`]);
    expect(data.startsWith(`${'a'.repeat(MAX_ROW_DATA_CHARS - 1)}…`)).toBe(true);
    expect(data).toBe(`${'a'.repeat(MAX_ROW_DATA_CHARS - 1)}… (12 more characters)`);
  });
});

describe('a file with a huge line or many bad rows', () => {
  it('reports a 3 MB line with its first 200 characters and its true length', async () => {
    const huge = '7'.repeat(3_000_000);
    const result = await validateImeiCsv(`Sno,IMEI1\n1,${huge}\n2,356938035643809\n`);
    expect(result.valid).toEqual(['356938035643809']);
    expect(result.invalid).toEqual([
      {
        line: 2,
        error: MESSAGES.invalidImeiLength,
        data: `1,${'7'.repeat(198)}${REPORT_TRUNCATION.moreCharacters(huge.length + 2 - 200)}`,
      },
    ]);
  });

  it('lists the first 1,000 bad rows, counts them all, and incorrect_data.csv says how many more', async () => {
    const lines = Array.from({ length: 1500 }, (_, i) => `${i + 1},bad${i}`);
    const result = await validateImeiCsv(`Sno,IMEI1\n${lines.join('\n')}\n`);
    expect(result.invalid).toHaveLength(MAX_INVALID_ROWS);
    expect(result.invalidCount).toBe(1500);
    expect(result.invalid.at(-1)).toEqual({
      line: 1001,
      error: MESSAGES.invalidImeiLength,
      data: '1000,bad999',
    });
    const csv = Papa.parse<string[]>(await incorrectDataCsv(result.invalid, result.invalidCount), {
      skipEmptyLines: true,
    }).data;
    expect(csv[0]).toEqual([...ERROR_REPORT_COLUMNS]);
    expect(csv).toHaveLength(1 + 1000 + 1);
    expect(csv.at(-1)).toEqual(['and 500 more rows', '', '']);
    // All listed: no last line.
    const few = await incorrectDataCsv(result.invalid.slice(0, 2));
    expect(few.split('\r\n')).toHaveLength(3);
  });

  it('bounds the Notify report the same way', async () => {
    const header = 'sno,name,imei1,amount,date,template';
    const rows = Array.from({ length: 1200 }, (_, i) => `${i},${'N'.repeat(300)},1,1,1,Pre`);
    const result = await validateNotifyCsv(`${header}\n${rows.join('\n')}\n`);
    expect(result.invalidCount).toBe(1200);
    expect(result.invalid).toHaveLength(MAX_INVALID_ROWS);
    expect(result.invalid[0]?.data).toBe(`0,${'N'.repeat(198)}… (112 more characters)`);
  });
});
