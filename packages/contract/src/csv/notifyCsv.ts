/**
 * The Notify batch CSV: headers sno, name, imei1, amount,
 * date, template in that order; each row has 6 columns; the IMEI has 15 digits; the template is Pre,
 * Post or Due; the amount a number with up to 2 decimals; the date DD/MM/YYYY. A row's errors are
 * reported together as 'Incorrect fields: …'. A valid row's header and message come from `notifyMessage`.
 *
 * The Notify single form's date rule holds for a file too: a Pre row is dated
 * today or later, a Post row today or earlier, a Due row today. "Today" is the operator's day, a
 * YYYY-MM-DD passed as `today`: the console leaves it out (the browser's own day), the server passes
 * the day in the operator's time zone (or REPORT_TIMEZONE). Without that rule a file sent "…is due on
 * 01/01/2020. Please pay on time…".
 *
 * Speed: a big file is checked at hundreds of thousands of rows per second (bench/notify-validation.ts):
 * a valid row is checked with precompiled tests and no intermediate objects; the messages of a bad row
 * are built only for it.
 */
import { parseDay } from '../dates';
import { MESSAGES } from '../messages';
import type { NotifyTemplate } from '../notify';
import { unstorableText } from '../text';
import { headerFormatProblem, isBlankRow } from './encoding';
import { headerRow, type InvalidRow } from './imeiCsv';
import { InvalidRowList } from './invalidRows';
import { type CsvInput, parseCsvRows } from './stream';

export const NOTIFY_CSV_HEADERS = ['sno', 'name', 'imei1', 'amount', 'date', 'template'] as const;

/**
 * A valid row. Its header and message are not stored on it: `notifyMessage(row.template, row)` gives them
 * where they are shown or sent. Building them for every row of a big file (two strings per row, kept until
 * the batch starts) took most of the validation's time and memory (bench/notify-validation.ts).
 */
export interface NotifyRow {
  sno: string;
  name: string;
  imei: string;
  amount: string;
  date: string;
  template: NotifyTemplate;
}

export interface NotifyCsvResult {
  valid: NotifyRow[];
  /** The first MAX_INVALID_ROWS invalid rows, in file order. */
  invalid: InvalidRow[];
  /** Every invalid row of the file, listed or not. */
  invalidCount: number;
  total: number;
  /** Valid rows whose IMEI an earlier valid row already has (absent when none). */
  duplicates?: number;
  note?: string;
}

export interface NotifyCsvOptions {
  /**
   * The operator's day, YYYY-MM-DD, for the date rule. Default: today where the code runs (the
   * browser's day in the console); the server passes the day in the operator's time zone.
   */
  today?: string;
}

export const NOTIFY_CSV_NO_DATA_NOTE = 'The file has no data rows: there is nothing to process.';

/** The date rule of each template, in the style of the spec's Notify CSV messages. */
export const NOTIFY_DATE_RULES = {
  Pre: 'Invalid date for Pre (must be today or later)',
  Post: 'Invalid date for Post (must be today or earlier)',
  Due: 'Invalid date for Due (must be today)',
} as const satisfies Record<NotifyTemplate, string>;

const IMEI = /^\d{15}$/;
const AMOUNT = /^\d+(\.\d{1,2})?$/;
const TEMPLATES: readonly string[] = ['Pre', 'Post', 'Due'];

/** DD/MM/YYYY naming a real calendar day (the contract's one day parser, dates.ts). */
export function isDdMmYyyy(value: string): boolean {
  return parseDay(value, 'DD/MM/YYYY') !== null;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** A digit's value, or -1 (the char code of a string index, NaN past the end, gives -1 too). */
function digit(code: number): number {
  return code >= 48 && code <= 57 ? code - 48 : -1;
}

/**
 * A DD/MM/YYYY calendar day as the number YYYYMMDD (days compare as numbers), or -1. The same days as
 * `isDdMmYyyy` (proleptic Gregorian, years 1–9999), without a regex match, an object or a Date per row.
 */
export function ddMmYyyyKey(value: string): number {
  if (value.length !== 10 || value.charCodeAt(2) !== 47 || value.charCodeAt(5) !== 47) return -1;
  const d1 = digit(value.charCodeAt(0));
  const d2 = digit(value.charCodeAt(1));
  const m1 = digit(value.charCodeAt(3));
  const m2 = digit(value.charCodeAt(4));
  const y1 = digit(value.charCodeAt(6));
  const y2 = digit(value.charCodeAt(7));
  const y3 = digit(value.charCodeAt(8));
  const y4 = digit(value.charCodeAt(9));
  if ((d1 | d2 | m1 | m2 | y1 | y2 | y3 | y4) < 0) return -1;
  const day = d1 * 10 + d2;
  const month = m1 * 10 + m2;
  const year = y1 * 1000 + y2 * 100 + y3 * 10 + y4;
  if (year < 1 || month < 1 || month > 12 || day < 1) return -1;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const last = month === 2 && leap ? 29 : (DAYS_IN_MONTH[month - 1] as number);
  return day > last ? -1 : year * 10000 + month * 100 + day;
}

/** YYYY-MM-DD → YYYYMMDD; throws on anything else (a caller's mistake, not the operator's). */
function todayKey(today: string): number {
  const day = parseDay(today);
  if (!day) throw new TypeError(`today must be a YYYY-MM-DD calendar day, not ${JSON.stringify(today)}`);
  return day.year * 10000 + day.month * 100 + day.day;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** The day of `now` where the code runs, YYYY-MM-DD (the browser's day in the console). */
export function localDay(now: Date = new Date()): string {
  return `${String(now.getFullYear()).padStart(4, '0')}-${pad2(now.getMonth() + 1)}-${pad2(now.getDate())}`;
}

/**
 * The day of `now` in an IANA time zone, YYYY-MM-DD, or null for a zone this runtime does not know (the
 * server takes the operator's zone from the request, and falls back to REPORT_TIMEZONE).
 */
export function dayInTimeZone(timeZone: string, now: Date = new Date()): string | null {
  let parts: Intl.DateTimeFormatPart[];
  try {
    parts = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).formatToParts(now);
  } catch {
    return null;
  }
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year').padStart(4, '0')}-${part('month')}-${part('day')}`;
}

/** The problem with a Pre, Post or Due row's date against today (both YYYYMMDD), or null. */
function dateRuleError(template: string, date: number, today: number): string | null {
  switch (template) {
    case 'Pre':
      return date < today ? NOTIFY_DATE_RULES.Pre : null;
    case 'Post':
      return date > today ? NOTIFY_DATE_RULES.Post : null;
    case 'Due':
      return date !== today ? NOTIFY_DATE_RULES.Due : null;
    default:
      return null;
  }
}

/**
 * The name is the one free-text column, and it is stored with the batch and sent in the message: a NUL
 * character (PostgreSQL refuses it; the upload failed with a 500) or a lone surrogate is refused with
 * the row's other errors.
 */
export const NOTIFY_NAME_UNSTORABLE = 'Invalid name (must not contain NUL characters)';

/**
 * The field errors of one notify row (empty when valid). With `today` (YYYY-MM-DD), a well-formed date
 * is also checked against the template's rule (NOTIFY_DATE_RULES).
 */
export function notifyRowErrors(
  fields: {
    name?: string;
    imei: string;
    amount: string;
    date: string;
    template: string;
  },
  today?: string,
): string[] {
  return rowErrors(fields, today === undefined ? null : todayKey(today));
}

function rowErrors(
  fields: { name?: string; imei: string; amount: string; date: string; template: string },
  today: number | null,
): string[] {
  const errors: string[] = [];
  if (fields.name !== undefined && unstorableText(fields.name)) errors.push(NOTIFY_NAME_UNSTORABLE);
  if (!IMEI.test(fields.imei)) errors.push(MESSAGES.notifyImei);
  if (!TEMPLATES.includes(fields.template)) errors.push(MESSAGES.notifyTemplate);
  if (!AMOUNT.test(fields.amount)) errors.push(MESSAGES.notifyAmount);
  const date = ddMmYyyyKey(fields.date);
  if (date < 0) errors.push(MESSAGES.notifyDate);
  else if (today !== null) {
    const rule = dateRuleError(fields.template, date, today);
    if (rule) errors.push(rule);
  }
  return errors;
}

/** Printable ASCII: no character `trim` removes. */
const plain = (code: number) => code > 32 && code < 127;

/** A cell trimmed; most cells have nothing to trim, and are kept as they are. */
function trimmed(cell: string): string {
  const last = cell.length - 1;
  return last >= 0 && plain(cell.charCodeAt(0)) && plain(cell.charCodeAt(last)) ? cell : cell.trim();
}

export class NotifyCsvValidator {
  private line = 0;
  private headerOk: boolean | null = null;
  /** Why the header is not comma-separated UTF-8 (when it did not match). */
  private headerProblem: string | null = null;
  private total = 0;
  private readonly valid: NotifyRow[] = [];
  private readonly invalid = new InvalidRowList();
  private readonly seen = new Set<string>();
  private duplicates = 0;
  /** Today as YYYYMMDD. */
  private readonly today: number;

  constructor(options: NotifyCsvOptions = {}) {
    this.today = todayKey(options.today ?? localDay());
  }

  push(rows: readonly (readonly string[])[]): void {
    const { valid, invalid, seen, today } = this;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i] as readonly string[];
      const line = ++this.line;
      if (this.headerOk === null) {
        this.headerOk =
          row.length === NOTIFY_CSV_HEADERS.length &&
          row.every(
            (cell, i) =>
              cell
                .replace(/^\uFEFF/, '')
                .trim()
                .toLowerCase() === NOTIFY_CSV_HEADERS[i],
          );
        if (!this.headerOk) this.headerProblem = headerFormatProblem(row);
        continue;
      }
      if (isBlankRow(row)) continue; // a blank line, or commas only
      this.total++;
      if (!this.headerOk) continue;
      if (row.length !== NOTIFY_CSV_HEADERS.length) {
        invalid.add(line, MESSAGES.notifyColumns, row);
        continue;
      }
      const sno = trimmed(row[0] as string);
      const name = trimmed(row[1] as string);
      const imei = trimmed(row[2] as string);
      const amount = trimmed(row[3] as string);
      const date = trimmed(row[4] as string);
      const template = trimmed(row[5] as string);
      // The valid row's checks, precompiled; the messages are built only for a bad row.
      const day = ddMmYyyyKey(date);
      if (
        !(template === 'Pre' || template === 'Post' || template === 'Due') ||
        day < 0 ||
        dateRuleError(template, day, today) !== null ||
        !IMEI.test(imei) ||
        !AMOUNT.test(amount) ||
        unstorableText(name) !== null
      ) {
        const errors = rowErrors({ name, imei, amount, date, template }, today);
        invalid.add(line, MESSAGES.notifyIncorrectFields(errors.join(', ')), row);
        continue;
      }
      valid.push({ sno, name, imei, amount, date, template });
      if (seen.has(imei)) this.duplicates++;
      else seen.add(imei);
    }
  }

  result(): NotifyCsvResult {
    if (this.headerOk !== true) {
      return {
        valid: [],
        invalid: [headerRow(this.headerProblem)],
        invalidCount: 1,
        total: this.total,
      };
    }
    const result: NotifyCsvResult = {
      valid: this.valid,
      invalid: this.invalid.rows,
      invalidCount: this.invalid.count,
      total: this.total,
    };
    if (this.duplicates > 0) result.duplicates = this.duplicates;
    if (this.total === 0) result.note = NOTIFY_CSV_NO_DATA_NOTE;
    return result;
  }
}

/**
 * Validates a Notify batch CSV (check the file's type with `csvFileTypeError` first). `today`: the
 * operator's day (NotifyCsvOptions).
 */
export async function validateNotifyCsv(
  source: CsvInput,
  options: NotifyCsvOptions = {},
): Promise<NotifyCsvResult> {
  const validator = new NotifyCsvValidator(options);
  await parseCsvRows(source, (rows) => validator.push(rows));
  return validator.result();
}
