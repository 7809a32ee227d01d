import { describe, expect, it } from 'vitest';
import { formatLocalDateTime } from './datetime';

describe('formatLocalDateTime', () => {
  it('formats a date in local time as YYYY-MM-DD HH:mm:ss with zero padding', () => {
    expect(formatLocalDateTime(new Date(2024, 0, 5, 3, 4, 9))).toBe('2024-01-05 03:04:09');
    expect(formatLocalDateTime(new Date(1999, 11, 31, 23, 59, 59))).toBe('1999-12-31 23:59:59');
  });

  it('reads an ISO UTC string as the same instant shown in local time', () => {
    const iso = '2030-06-15T10:20:30.000Z';
    const local = new Date(iso);
    expect(formatLocalDateTime(iso)).toBe(formatLocalDateTime(local));
    expect(formatLocalDateTime(iso)).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
  });

  it('converts a UTC instant to the local time zone', () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Kolkata';
      expect(formatLocalDateTime('2030-06-15T10:20:30.000Z')).toBe('2030-06-15 15:50:30');
      process.env.TZ = 'UTC';
      expect(formatLocalDateTime('2030-06-15T10:20:30.000Z')).toBe('2030-06-15 10:20:30');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('gives an empty string for a value that is not a date', () => {
    expect(formatLocalDateTime('not a date')).toBe('');
  });
});
