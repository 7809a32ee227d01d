import { describe, expect, it } from 'vitest';
import { auditReportExportQuerySchema, formatDateTimeIn, isTimeZone } from './auditReport';

describe('the audit report download', () => {
  it('formats a date-time as the screen does, in the time zone asked for', () => {
    expect(formatDateTimeIn('2030-06-15T10:20:30.000Z', 'Asia/Kolkata')).toBe('2030-06-15 15:50:30');
    // Midnight is 00, never 24; the day and the year change with the zone.
    expect(formatDateTimeIn('2030-01-01T00:00:00.000Z', 'UTC')).toBe('2030-01-01 00:00:00');
    expect(formatDateTimeIn('2030-01-01T00:00:00.000Z', 'America/New_York')).toBe('2029-12-31 19:00:00');
    // Summer time is the zone's own.
    expect(formatDateTimeIn('2030-07-01T12:00:00.000Z', 'Europe/London')).toBe('2030-07-01 13:00:00');
    expect(formatDateTimeIn('not a date', 'UTC')).toBe('');
  });

  it('takes a 15-digit IMEI and a known time zone only', () => {
    expect(isTimeZone('Asia/Kolkata')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(auditReportExportQuerySchema.safeParse({ imei1: '356938035643809' }).success).toBe(true);
    expect(
      auditReportExportQuerySchema.safeParse({ imei1: '356938035643809', timeZone: 'Europe/Paris' }).success,
    ).toBe(true);
    expect(auditReportExportQuerySchema.safeParse({ imei1: '35693803564380' }).success).toBe(false);
    expect(
      auditReportExportQuerySchema.safeParse({ imei1: '356938035643809', timeZone: 'Mars/Olympus' }).success,
    ).toBe(false);
  });
});
