import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../messages';
import { notifyMessage } from '../notify';
import { CSV_FORMAT_MESSAGES } from './encoding';
import {
  ddMmYyyyKey,
  isDdMmYyyy,
  localDay,
  NOTIFY_DATE_RULES,
  NOTIFY_NAME_UNSTORABLE,
  notifyRowErrors,
  validateNotifyCsv,
} from './notifyCsv';

const HEADER = 'sno,name,imei1,amount,date,template';
/** The operator's day in these tests (the date rule reads it). */
const today = '2026-01-01';

describe('Notify CSV', () => {
  it('accepts valid rows, whose header and message notifyMessage gives', async () => {
    const result = await validateNotifyCsv(
      `\uFEFF${HEADER}\r\n1,Asha,490154203237518,1499.5,05/12/2026,Pre\r\n2,"Ravi, K",490154203237526,200,01/11/2026,Post\r\n\r\n`,
      { today: '2026-11-24' },
    );
    expect(result.invalid).toEqual([]);
    expect(result.total).toBe(2);
    expect(result.valid.map((r) => [r.imei, r.template, notifyMessage(r.template, r).header])).toEqual([
      ['490154203237518', 'Pre', 'Payment Reminder'],
      ['490154203237526', 'Post', 'Payment Overdue'],
    ]);
    const row = result.valid[0];
    if (!row) throw new Error('no valid row');
    const texts = notifyMessage(row.template, row);
    expect(texts.message).toContain('Dear Asha');
    expect(texts.message).toContain('₹1,499.50');
    expect(result.valid[1]?.name).toBe('Ravi, K');
  });

  it('refuses headers out of order', async () => {
    const result = await validateNotifyCsv(
      'sno,imei1,name,amount,date,template\n1,490154203237518,A,1,01/01/2026,Pre\n',
      { today },
    );
    expect(result.invalid).toEqual([
      { line: 1, error: MESSAGES.invalidHeaders, data: MESSAGES.headersNotMatched },
    ]);
  });

  it('reports each rule with its exact message, several at once as Incorrect fields', async () => {
    const result = await validateNotifyCsv(
      [
        HEADER,
        '1,A,490154203237518,1,01/01/2026',
        '2,B,49015420323751,1,01/01/2026,Pre',
        '3,C,490154203237518,1,01/01/2026,Late',
        '4,D,490154203237518,1.234,01/01/2026,Due',
        '5,E,490154203237518,1,2026-01-01,Due',
        '6,F,123,abc,31/02/2026,Soon',
      ].join('\n'),
      { today },
    );
    expect(result.invalid.map((r) => [r.line, r.error])).toEqual([
      [2, MESSAGES.notifyColumns],
      [3, `Incorrect fields: ${MESSAGES.notifyImei}`],
      [4, `Incorrect fields: ${MESSAGES.notifyTemplate}`],
      [5, `Incorrect fields: ${MESSAGES.notifyAmount}`],
      [6, `Incorrect fields: ${MESSAGES.notifyDate}`],
      [
        7,
        `Incorrect fields: ${[MESSAGES.notifyImei, MESSAGES.notifyTemplate, MESSAGES.notifyAmount, MESSAGES.notifyDate].join(', ')}`,
      ],
    ]);
    expect(result.valid).toEqual([]);
  });

  it("refuses a name the database cannot store (a NUL character), with the row's other errors", async () => {
    const result = await validateNotifyCsv(
      `${HEADER}\n1,A\u0000B,490154203237518,1,01/01/2030,Pre\n2,C\u0000,1,1,01/01/2030,Pre\n`,
      { today },
    );
    expect(result.valid).toEqual([]);
    expect(result.invalid.map((r) => [r.line, r.error])).toEqual([
      [2, `Incorrect fields: ${NOTIFY_NAME_UNSTORABLE}`],
      [3, `Incorrect fields: ${NOTIFY_NAME_UNSTORABLE}, ${MESSAGES.notifyImei}`],
    ]);
  });

  it('passes a file with no data rows with a note', async () => {
    const result = await validateNotifyCsv(`${HEADER}\n\n`);
    expect(result).toMatchObject({ valid: [], invalid: [], total: 0 });
    expect(result.note).toMatch(/no data rows/);
  });

  it('knows real calendar days', () => {
    expect(isDdMmYyyy('29/02/2028')).toBe(true);
    expect(isDdMmYyyy('29/02/2027')).toBe(false);
    expect(isDdMmYyyy('1/1/2026')).toBe(false);
  });

  it("follows the single form's date rule against the operator's day: Pre today or later, Post today or earlier, Due today", async () => {
    const result = await validateNotifyCsv(
      [
        HEADER,
        '1,A,490154203237518,1,31/12/2025,Pre',
        '2,B,490154203237518,1,01/01/2026,Pre',
        '3,C,490154203237518,1,02/01/2026,Post',
        '4,D,490154203237518,1,01/01/2026,Post',
        '5,E,490154203237518,1,02/01/2026,Due',
        '6,F,490154203237518,1,01/01/2026,Due',
        '7,G,123,1,01/01/2020,Pre',
      ].join('\n'),
      { today },
    );
    expect(result.invalid.map((r) => [r.line, r.error])).toEqual([
      [2, `Incorrect fields: ${NOTIFY_DATE_RULES.Pre}`],
      [4, `Incorrect fields: ${NOTIFY_DATE_RULES.Post}`],
      [6, `Incorrect fields: ${NOTIFY_DATE_RULES.Due}`],
      [8, `Incorrect fields: ${MESSAGES.notifyImei}, ${NOTIFY_DATE_RULES.Pre}`],
    ]);
    expect(result.valid.map((r) => r.sno)).toEqual(['2', '4', '6']);
    expect(NOTIFY_DATE_RULES).toEqual({
      Pre: 'Invalid date for Pre (must be today or later)',
      Post: 'Invalid date for Post (must be today or earlier)',
      Due: 'Invalid date for Due (must be today)',
    });
  });

  it("takes today from where it runs when not given (the browser's day in the console)", async () => {
    const [year, month, day] = localDay().split('-');
    const result = await validateNotifyCsv(`${HEADER}\n1,A,490154203237518,1,${day}/${month}/${year},Due\n`);
    expect(result.invalid).toEqual([]);
    expect(
      notifyRowErrors({ imei: '490154203237518', amount: '1', date: '01/01/2026', template: 'Due' }, today),
    ).toEqual([]);
    expect(() =>
      notifyRowErrors({ imei: '1', amount: '1', date: '1', template: 'Due' }, '2026-02-30'),
    ).toThrow(/today must be a YYYY-MM-DD/);
  });

  it('counts rows that repeat an IMEI of an earlier row, skips rows of commas only, names a wrong separator or encoding', async () => {
    const rows = `1,A,490154203237518,1,01/01/2026,Due\n,,,,,\n2,B,490154203237518,2,01/01/2026,Due\n , ,,,,\n3,C,490154203237526,3,01/01/2026,Due\n`;
    const result = await validateNotifyCsv(`${HEADER}\n${rows}`, { today });
    expect(result).toMatchObject({ total: 3, invalidCount: 0, duplicates: 1 });
    const semicolons = await validateNotifyCsv(
      `${HEADER.replaceAll(',', ';')}\n1;A;490154203237518;1;01/01/2026;Due\n`,
      { today },
    );
    expect(semicolons.invalid).toEqual([
      { line: 1, error: CSV_FORMAT_MESSAGES.semicolons, data: MESSAGES.headersNotMatched },
    ]);
    const utf16 = new Blob([
      Buffer.from(`\uFEFF${HEADER}\r\n1,A,490154203237518,1,01/01/2026,Due\r\n`, 'utf16le'),
    ]);
    expect((await validateNotifyCsv(utf16, { today })).invalid).toEqual([
      { line: 1, error: CSV_FORMAT_MESSAGES.utf16, data: MESSAGES.headersNotMatched },
    ]);
  });

  it("reads the same calendar days as the contract's day parser", () => {
    const samples = [
      '29/02/2028',
      '29/02/2027',
      '29/02/2000',
      '29/02/1900',
      '31/04/2026',
      '30/04/2026',
      '00/01/2026',
    ];
    samples.push(
      '01/00/2026',
      '01/13/2026',
      '01/01/0000',
      '01/01/0001',
      '31/12/9999',
      '1/01/2026',
      '01-01-2026',
      '０1/01/2026',
    );
    for (const value of samples) expect(ddMmYyyyKey(value) >= 0, value).toBe(isDdMmYyyy(value));
    expect(ddMmYyyyKey('05/12/2026')).toBe(20261205);
  });
});
