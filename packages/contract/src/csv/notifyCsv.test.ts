import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../messages';
import { isDdMmYyyy, NOTIFY_NAME_UNSTORABLE, validateNotifyCsv } from './notifyCsv';

const HEADER = 'sno,name,imei1,amount,date,template';

describe('Notify CSV', () => {
  it('accepts valid rows and generates the header and message of each', async () => {
    const result = await validateNotifyCsv(
      `\uFEFF${HEADER}\r\n1,Asha,490154203237518,1499.5,05/12/2026,Pre\r\n2,"Ravi, K",490154203237526,200,01/11/2026,Post\r\n\r\n`,
    );
    expect(result.invalid).toEqual([]);
    expect(result.total).toBe(2);
    expect(result.valid.map((r) => [r.imei, r.template, r.header])).toEqual([
      ['490154203237518', 'Pre', 'Payment Reminder'],
      ['490154203237526', 'Post', 'Payment Overdue'],
    ]);
    expect(result.valid[0]?.message).toContain('Dear Asha');
    expect(result.valid[0]?.message).toContain('₹1,499.50');
    expect(result.valid[1]?.name).toBe('Ravi, K');
  });

  it('refuses headers out of order', async () => {
    const result = await validateNotifyCsv(
      'sno,imei1,name,amount,date,template\n1,490154203237518,A,1,01/01/2026,Pre\n',
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
});
