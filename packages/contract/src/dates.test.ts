import { describe, expect, it } from 'vitest';
import { auditSearchSchema } from './api/audit';
import { isDdMmYyyy } from './csv/notifyCsv';
import {
  addDays,
  DATE_MESSAGES,
  dayProblem,
  daysInZone,
  isoDaySchema,
  isTimeZone,
  parseDay,
  timeZoneSchema,
  wallClockIn,
} from './dates';
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

describe('time zones: the operator’s days and wall clock', () => {
  const range = (from: string, to: string, zone: string) => {
    const { start, end } = daysInZone(from, to, zone);
    return [start.toISOString(), end.toISOString()];
  };

  it('knows IANA zones and refuses others with the catalogue message', () => {
    expect(isTimeZone('Asia/Kolkata')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
    expect(timeZoneSchema.safeParse(' Asia/Kolkata ').data).toBe('Asia/Kolkata');
    expect(timeZoneSchema.safeParse('Mars/Olympus').error?.issues[0]?.message).toBe(MESSAGES.unknownTimeZone);
    expect(timeZoneSchema.safeParse('x'.repeat(65)).success).toBe(false);
  });

  it("takes a day as the zone's whole day: 20:00 UTC yesterday is today in Kolkata", () => {
    expect(range('2026-11-24', '2026-11-24', 'Asia/Kolkata')).toEqual([
      '2026-11-23T18:30:00.000Z',
      '2026-11-24T18:30:00.000Z',
    ]);
    const { start, end } = daysInZone('2026-11-24', '2026-11-24', 'Asia/Kolkata');
    const evening = new Date('2026-11-23T20:00:00.000Z');
    expect(start <= evening && evening < end).toBe(true);
    expect(range('2026-01-01', '2026-12-31', 'UTC')).toEqual([
      '2026-01-01T00:00:00.000Z',
      '2027-01-01T00:00:00.000Z',
    ]);
  });

  it('follows summer time: 23- and 25-hour days, a midnight skipped, a day that never was', () => {
    expect(range('2026-03-08', '2026-03-08', 'America/New_York')).toEqual([
      '2026-03-08T05:00:00.000Z',
      '2026-03-09T04:00:00.000Z',
    ]);
    expect(range('2026-11-01', '2026-11-01', 'America/New_York')).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-02T05:00:00.000Z',
    ]);
    // Chile's summer time began at midnight: 2022-09-11 began at 01:00, an hour after 2022-09-10 ended.
    expect(range('2022-09-10', '2022-09-11', 'America/Santiago')).toEqual([
      '2022-09-10T04:00:00.000Z',
      '2022-09-12T03:00:00.000Z',
    ]);
    // Samoa skipped 2011-12-30: the day holds no instant.
    expect(range('2011-12-30', '2011-12-30', 'Pacific/Apia')).toEqual([
      '2011-12-30T10:00:00.000Z',
      '2011-12-30T10:00:00.000Z',
    ]);
  });

  it('refuses a day that is not on the calendar', () => {
    expect(() => daysInZone('2026-02-30', '2026-03-01', 'UTC')).toThrow(RangeError);
  });

  it('counts days across months, years and leap days', () => {
    expect(addDays('2028-02-28', 1)).toBe('2028-02-29');
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
    expect(addDays('2026-03-01', -29)).toBe('2026-01-31');
  });

  it("converts instants to the zone's wall clock, hour by hour and across a change of offset", () => {
    const kolkata = wallClockIn('Asia/Kolkata');
    expect(new Date(kolkata(Date.parse('2026-11-23T20:00:00.000Z'))).toISOString()).toBe(
      '2026-11-24T01:30:00.000Z',
    );
    const newYork = wallClockIn('America/New_York');
    const wall = (iso: string) => new Date(newYork(Date.parse(iso))).toISOString();
    expect(wall('2026-03-08T06:59:59.500Z')).toBe('2026-03-08T01:59:59.500Z');
    expect(wall('2026-03-08T07:00:00.000Z')).toBe('2026-03-08T03:00:00.000Z');
    expect(wall('2026-11-01T05:30:00.000Z')).toBe('2026-11-01T01:30:00.000Z');
    expect(wall('2026-11-01T06:30:00.000Z')).toBe('2026-11-01T01:30:00.000Z');
    expect(wall('2026-07-01T12:00:00.000Z')).toBe('2026-07-01T08:00:00.000Z');
  });
});
