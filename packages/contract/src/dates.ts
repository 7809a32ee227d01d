/**
 * Calendar days, read one way everywhere. Reports and the audit log take `YYYY-MM-DD`, Notify files and
 * texts `DD/MM/YYYY`. Each used its own regex, and a regex alone lets 2026-02-30 through to PostgreSQL,
 * which rejects it and the call failed with a 500. Every day the contract reads now goes through
 * `parseDay`, so an impossible day gets a clear 400 before any query runs.
 *
 * Time zones: the console sends its IANA time zone with every dated call (`timeZoneSchema`;
 * the server falls back to REPORT_TIMEZONE). A day asked for is that zone's whole day (`daysInZone`), and
 * the date-times shown and exported are that zone's wall clock (`wallClockIn`).
 */
import { z } from 'zod';
import { MESSAGES } from './messages';

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

// ---- Time zones ----

/** Whether `name` is a time zone this runtime knows (an IANA name such as `Asia/Kolkata`, or `UTC`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/**
 * The operator's time zone, sent with every dated call (reports and their exports, the audit log and its
 * export, the Audit Report download, the dashboard): the console's
 * `Intl.DateTimeFormat().resolvedOptions().timeZone`. One the runtime does not know is refused (400);
 * without one the server takes its REPORT_TIMEZONE.
 */
export const timeZoneSchema = z.string().trim().max(64).refine(isTimeZone, MESSAGES.unknownTimeZone).meta({
  description:
    "The operator's IANA time zone: days are that zone's whole days, date-times are shown and exported in it. Without it, the server's REPORT_TIMEZONE.",
  example: 'Asia/Kolkata',
});

const DAY_MS = 86_400_000;
const wallFormats = new Map<string, Intl.DateTimeFormat>();

/** The wall clock of the instant `utcMs` in `timeZone`, as the milliseconds of a UTC date with those fields. */
function wallMs(utcMs: number, timeZone: string): number {
  let format = wallFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
    });
    wallFormats.set(timeZone, format);
  }
  const part: Record<string, string> = {};
  for (const p of format.formatToParts(utcMs)) part[p.type] = p.value;
  const year = Number(part.year) * (part.era === 'BC' ? -1 : 1) + (part.era === 'BC' ? 1 : 0);
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC maps the years 0–99 to 1900–1999.
  date.setUTCFullYear(year, Number(part.month) - 1, Number(part.day));
  date.setUTCHours(Number(part.hour), Number(part.minute), Number(part.second), 0);
  return date.getTime() + (((utcMs % 1000) + 1000) % 1000);
}

/** Midnight of a YYYY-MM-DD day as the milliseconds of that UTC date; throws on a day not on the calendar. */
function dayMs(day: string): number {
  const parsed = parseDay(day);
  if (!parsed) throw new RangeError(`Not a YYYY-MM-DD calendar day: ${JSON.stringify(day)}`);
  const date = new Date(0);
  date.setUTCFullYear(parsed.year, parsed.month - 1, parsed.day);
  return date.getTime();
}

/**
 * The first instant of `day` in `timeZone`: its midnight, the first one when summer time ends at
 * midnight and it happens twice, or the end of the gap when summer time starts at midnight and skips it.
 */
function dayStartMs(midnight: number, timeZone: string): number {
  // The offsets in force around that midnight (a zone changes its offset at most once in a day).
  const candidates = [...new Set([-14, 0, 14].map((h) => midnight + h * 3_600_000))]
    .map((probe) => midnight - (wallMs(probe, timeZone) - probe))
    .sort((a, b) => a - b);
  const exact = candidates.find((t) => wallMs(t, timeZone) === midnight);
  if (exact !== undefined) return exact;
  // Midnight never happens that day: the day begins where the gap ends, found between an instant of the
  // day before and one of the day itself.
  let before = candidates.filter((t) => wallMs(t, timeZone) < midnight).at(-1) ?? midnight - DAY_MS;
  let inDay = candidates.find((t) => wallMs(t, timeZone) > midnight) ?? midnight + DAY_MS;
  while (inDay - before > 1) {
    const middle = Math.floor((before + inDay) / 2);
    if (wallMs(middle, timeZone) >= midnight) inDay = middle;
    else before = middle;
  }
  return inDay;
}

/**
 * The whole days `from`…`to` (inclusive YYYY-MM-DD calendar days) in `timeZone`, as the UTC instants
 * [start, end): a row is in them when start ≤ its time < end. The one reading of "these days" for every
 * dated call: reports, the audit log, the dashboard, batches.
 */
export function daysInZone(from: string, to: string, timeZone: string): { start: Date; end: Date } {
  return {
    start: new Date(dayStartMs(dayMs(from), timeZone)),
    end: new Date(dayStartMs(dayMs(to) + DAY_MS, timeZone)),
  };
}

/** The YYYY-MM-DD calendar day `days` days after `day` (before it when negative). */
export function addDays(day: string, days: number): string {
  const date = new Date(dayMs(day) + days * DAY_MS);
  const year = String(date.getUTCFullYear()).padStart(4, '0');
  return `${year}-${String(date.getUTCMonth() + 1).padStart(2, '0')}-${String(date.getUTCDate()).padStart(2, '0')}`;
}

/**
 * A converter from instants (epoch milliseconds) to their wall clock in `timeZone` (the milliseconds of
 * a UTC date with the fields the zone shows), for the many date-times of an export: the zone's offset is
 * looked up once per hour of time (an hour with a change of offset in it is converted instant by instant).
 */
export function wallClockIn(timeZone: string): (utcMs: number) => number {
  const offsets = new Map<number, number | null>();
  const HOUR = 3_600_000;
  // The last hour seen (an export's rows come in time order, so most follow one another within an hour).
  let lastHour = Number.NaN;
  let lastOffset: number | null = null;
  return (utcMs) => {
    const hour = Math.floor(utcMs / HOUR);
    if (hour !== lastHour) {
      let offset = offsets.get(hour);
      if (offset === undefined) {
        const start = hour * HOUR;
        const atStart = wallMs(start, timeZone) - start;
        const atEnd = wallMs(start + HOUR - 1, timeZone) - (start + HOUR - 1);
        offset = atStart === atEnd ? atStart : null;
        offsets.set(hour, offset);
      }
      lastHour = hour;
      lastOffset = offset;
    }
    return lastOffset === null ? wallMs(utcMs, timeZone) : utcMs + lastOffset;
  };
}
