import { type BatchResult, parseCsvRows } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import {
  IMEI_RESULTS_COLUMNS,
  NOTIFY_RESULTS_COLUMNS,
  processedFileName,
  processedResults,
  resultsCsv,
  resultsFileName,
} from './resultsCsv';

const result = (
  sno: number,
  imei: string,
  validate: BatchResult['validate'],
  extra: Partial<BatchResult> = {},
) =>
  ({
    sno,
    imei,
    validate,
    note: null,
    transactionId: null,
    name: null,
    amount: null,
    date: null,
    template: null,
    header: null,
    notification: null,
    ...extra,
  }) satisfies BatchResult;

async function rowsOf(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await parseCsvRows(text, (chunk) => rows.push(...chunk.map((row) => [...row])));
  return rows;
}

describe('file names', () => {
  it('IMEI batches download imei_data.csv; Notify its uploaded file name', () => {
    expect(resultsFileName('imei', 'devices.csv')).toBe('imei_data.csv');
    expect(resultsFileName('notify', 'reminders.csv')).toBe('reminders.csv');
    expect(resultsFileName('notify', 'Reminders.CSV')).toBe('Reminders.csv');
    expect(resultsFileName('notify', null)).toBe('batch.csv');
  });

  it("Set Wallpaper's processed list is the file's name with _processed", () => {
    expect(processedFileName('wallpapers.csv')).toBe('wallpapers_processed.csv');
    expect(processedFileName('list')).toBe('list_processed.csv');
  });
});

describe('results CSV', () => {
  it('imei_data.csv has S.No., IMEI, Status (found / not found) and the Reason of a not found row', async () => {
    const text = await resultsCsv('imei', [
      result(1, '356938035643809', 'found'),
      result(2, '100000000000001', 'not found', { note: 'not registered' }),
      result(3, '356938035643817', 'not found', { note: 'released' }),
      result(4, '356938035643825', 'not found', { note: 'de-enrolled' }),
    ]);
    expect(text.split('\r\n')[0]).toBe('S.No.,IMEI,Status,Reason');
    expect(await rowsOf(text)).toEqual([
      [...IMEI_RESULTS_COLUMNS],
      ['1', '356938035643809', 'found', ''],
      ['2', '100000000000001', 'not found', 'not registered'],
      ['3', '356938035643817', 'not found', 'released'],
      ['4', '356938035643825', 'not found', 'de-enrolled'],
    ]);
  });

  it('the Notify CSV carries name, amount, date, template, header, notification, Device Available and Reason', async () => {
    const text = await resultsCsv('notify', [
      result(1, '356938035643809', 'found', {
        name: 'Asha, Verma',
        amount: '1499.50',
        date: '05/01/2030',
        template: 'Pre',
        header: 'Payment Reminder',
        notification: 'Dear Asha, your EMI of ₹1,499.50 is due on 05/01/2030.',
      }),
      result(2, '100000000000001', 'not found', { name: 'Ravi', template: 'Due', note: 'released' }),
    ]);
    expect(await rowsOf(text)).toEqual([
      [...NOTIFY_RESULTS_COLUMNS],
      [
        '1',
        'Asha, Verma',
        '356938035643809',
        '1499.50',
        '05/01/2030',
        'Pre',
        'Payment Reminder',
        'Dear Asha, your EMI of ₹1,499.50 is due on 05/01/2030.',
        'Yes',
        '',
      ],
      ['2', 'Ravi', '100000000000001', '', '', 'Due', '', '', 'No', 'released'],
    ]);
  });

  it('neutralises cells a spreadsheet would run as a formula', async () => {
    const text = await resultsCsv('notify', [
      result(1, '356938035643809', 'found', {
        name: '=HYPERLINK("x")',
        header: '+1',
        notification: '@SUM(A1)',
      }),
    ]);
    const [, row] = await rowsOf(text);
    expect(row?.[1]).toBe(`'=HYPERLINK("x")`);
    expect(row?.[6]).toBe(`'+1`);
    expect(row?.[7]).toBe(`'@SUM(A1)`);
  });

  it('the processed list keeps the rows the server has decided, in order', () => {
    const rows = [result(1, 'a', 'found'), result(2, 'b', null), result(3, 'c', 'not found')];
    expect(processedResults(rows).map((r) => r.sno)).toEqual([1, 3]);
  });
});
