/**
 * Calendar days, read one way everywhere. Reports and the audit log take `YYYY-MM-DD`, Notify files and
 * texts `DD/MM/YYYY`. Each used its own regex, and a regex alone lets 2026-02-30 through to PostgreSQL,
 * which rejects it and the call failed with a 500. Every day the contract reads now goes through
 * `parseDay`, so an impossible day gets a clear 400 before any query runs.
 */
import { z } from 'zod';

export type DayFormat = 'YYYY-MM-DD' | 'DD/MM/YYYY';

export interface CalendarDay {
  year: number;
  /** 1–12. */
  month: number;
  /** 1–31. */
  day: number;
}

const SHAPES: Record<DayFormat, { re: RegExp; order: readonly [number, number, number] }> = {
  // [year, month, day] positions in the match
  'YYYY-MM-DD': { re: /^(\d{4})-(\d{2})-(\d{2})$/, order: [1, 2, 3] },
  'DD/MM/YYYY': { re: /^(\d{2})\/(\d{2})\/(\d{4})$/, order: [3, 2, 1] },
};

/** Whether the day exists: month 1–12, day within the month (leap years counted), year 1–9999. */
export function isCalendarDay({ year, month, day }: CalendarDay): boolean {
  if (year < 1 || year > 9999 || month < 1 || month > 12 || day < 1) return false;
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0–99 to 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The day `value` names in `format`, or null when it is not in that shape or not on the calendar. */
export function parseDay(value: string, format: DayFormat = 'YYYY-MM-DD'): CalendarDay | null {
  const { re, order } = SHAPES[format];
  const match = re.exec(value);
  if (!match) return null;
  const day = {
    year: Number(match[order[0]]),
    month: Number(match[order[1]]),
    day: Number(match[order[2]]),
  };
  return isCalendarDay(day) ? day : null;
}

/** Whether `value` has the shape of `format` (whatever the digits): tells "no date" from "no such day". */
export function hasDayShape(value: string, format: DayFormat = 'YYYY-MM-DD'): boolean {
  return SHAPES[format].re.test(value);
}

export const DATE_MESSAGES = {
  /** A well-formed day that is not on the calendar, e.g. 2026-02-30. */
  notACalendarDay: (field: string, value: string) =>
    `Invalid ${field}: ${value} is not a day on the calendar.`,
  /** A value that is not a day in the expected shape. */
  expectedDay: (field: string) => `Invalid ${field}: expected a date as YYYY-MM-DD.`,
} as const;

/** The problem with a YYYY-MM-DD value named `field`, or null when it is a calendar day. */
export function dayProblem(field: string, value: string): string | null {
  if (!hasDayShape(value)) return DATE_MESSAGES.expectedDay(field);
  return parseDay(value) ? null : DATE_MESSAGES.notACalendarDay(field, value);
}

/**
 * A YYYY-MM-DD calendar day in a request schema. Marked `format: date` in the OpenAPI document, so
 * integrators (and the hostile-input fuzzing, which reads that document) know the field is a day.
 */
export const isoDaySchema = z
  .string()
  .regex(SHAPES['YYYY-MM-DD'].re, 'expected a date as YYYY-MM-DD.')
  .refine((value) => parseDay(value) !== null, {
    error: (issue) => `${String(issue.input)} is not a day on the calendar.`,
  })
  .meta({ format: 'date' });
