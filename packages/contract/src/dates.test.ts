import { describe, expect, it } from 'vitest';
import { auditSearchSchema } from './api/audit';
import { isDdMmYyyy } from './csv/notifyCsv';
import { DATE_MESSAGES, dayProblem, isoDaySchema, parseDay } from './dates';
import { MESSAGES } from './messages';
import { validateReportForm } from './reports';

describe('parseDay: the one reading of a calendar day', () => {
  it.each(['2026-01-31', '2028-02-29', '2000-02-29', '0001-01-01', '9999-12-31'])('reads %s', (day) => {
    const [year, month, date] = day.split('-').map(Number);
    expect(parseDay(day)).toEqual({ year, month, day: date });
  });

  it.each([
    '2026-02-30',
    '2027-02-29',
    '1900-02-29',
    '2026-04-31',
    '2026-13-01',
    '2026-00-10',
    '2026-01-00',
    '0000-01-01',
    '2026-1-1',
    '26-01-01',
    '2026/01/01',
    '',
  ])('refuses %j', (day) => {
    expect(parseDay(day)).toBeNull();
  });

  it('reads DD/MM/YYYY (the Notify files) by the same rule', () => {
    expect(parseDay('29/02/2028', 'DD/MM/YYYY')).toEqual({ year: 2028, month: 2, day: 29 });
    expect(parseDay('31/02/2026', 'DD/MM/YYYY')).toBeNull();
    expect(isDdMmYyyy('30/04/2026')).toBe(true);
    expect(isDdMmYyyy('31/04/2026')).toBe(false);
    expect(isDdMmYyyy('00/01/0000')).toBe(false);
  });

  it('names the problem: not a date, or not a day on the calendar', () => {
    expect(dayProblem('from', '2026-02-30')).toBe('Invalid from: 2026-02-30 is not a day on the calendar.');
    expect(dayProblem('from', 'soon')).toBe('Invalid from: expected a date as YYYY-MM-DD.');
    expect(dayProblem('from', '2026-02-28')).toBeNull();
  });

  it('refuses impossible days in the report form and the audit search alike', () => {
    const form = { report: 'release', startdate: '2026-02-30', enddate: '2026-03-01' };
    expect(validateReportForm(form)).toBe(DATE_MESSAGES.notACalendarDay('startdate', '2026-02-30'));
    expect(validateReportForm({ ...form, startdate: '' })).toBe(MESSAGES.reportDatesRequired);
    expect(validateReportForm({ ...form, startdate: '2026-02-28' })).toBeNull();
    expect(auditSearchSchema.safeParse({ from: '2026-02-30' }).success).toBe(false);
    expect(auditSearchSchema.safeParse({ from: '2026-02-28' }).success).toBe(true);
    expect(isoDaySchema.safeParse('2026-04-31').error?.issues[0]?.message).toBe(
      '2026-04-31 is not a day on the calendar.',
    );
  });
});
