/**
 * The Notify batch CSV (spec §3 Notify CSV columns, §5 Notify CSV): headers sno, name, imei1, amount,
 * date, template in that order; each row has 6 columns; the IMEI has 15 digits; the template is Pre,
 * Post or Due; the amount a number with up to 2 decimals; the date DD/MM/YYYY. A row's errors are
 * reported together as 'Incorrect fields: …'. Each valid row gets its generated header and message.
 */
import { parseDay } from '../dates';
import { MESSAGES } from '../messages';
import { type NotifyTemplate, notifyMessage } from '../notify';
import { unstorableText } from '../text';
import type { InvalidRow } from './imeiCsv';
import { InvalidRowList } from './invalidRows';
import { type CsvInput, parseCsvRows } from './stream';

export const NOTIFY_CSV_HEADERS = ['sno', 'name', 'imei1', 'amount', 'date', 'template'] as const;

export interface NotifyRow {
  sno: string;
  name: string;
  imei: string;
  amount: string;
  date: string;
  template: NotifyTemplate;
  header: string;
  message: string;
}

export interface NotifyCsvResult {
  valid: NotifyRow[];
  /** The first MAX_INVALID_ROWS invalid rows, in file order. */
  invalid: InvalidRow[];
  /** Every invalid row of the file, listed or not. */
  invalidCount: number;
  total: number;
  note?: string;
}

export const NOTIFY_CSV_NO_DATA_NOTE = 'The file has no data rows: there is nothing to process.';

const IMEI = /^\d{15}$/;
const AMOUNT = /^\d+(\.\d{1,2})?$/;
const TEMPLATES: readonly string[] = ['Pre', 'Post', 'Due'];

/** DD/MM/YYYY naming a real calendar day (the contract's one day parser, dates.ts). */
export function isDdMmYyyy(value: string): boolean {
  return parseDay(value, 'DD/MM/YYYY') !== null;
}

/**
 * The name is the one free-text column, and it is stored with the batch and sent in the message: a NUL
 * character (PostgreSQL refuses it; the upload failed with a 500) or a lone surrogate is refused with
 * the row's other errors.
 */
export const NOTIFY_NAME_UNSTORABLE = 'Invalid name (must not contain NUL characters)';

/** The field errors of one notify row (empty when valid). */
export function notifyRowErrors(fields: {
  name?: string;
  imei: string;
  amount: string;
  date: string;
  template: string;
}): string[] {
  const errors: string[] = [];
  if (fields.name !== undefined && unstorableText(fields.name)) errors.push(NOTIFY_NAME_UNSTORABLE);
  if (!IMEI.test(fields.imei)) errors.push(MESSAGES.notifyImei);
  if (!TEMPLATES.includes(fields.template)) errors.push(MESSAGES.notifyTemplate);
  if (!AMOUNT.test(fields.amount)) errors.push(MESSAGES.notifyAmount);
  if (!isDdMmYyyy(fields.date)) errors.push(MESSAGES.notifyDate);
  return errors;
}

export class NotifyCsvValidator {
  private line = 0;
  private headerOk: boolean | null = null;
  private total = 0;
  private readonly valid: NotifyRow[] = [];
  private readonly invalid = new InvalidRowList();

  push(rows: readonly (readonly string[])[]): void {
    for (const row of rows) {
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
        continue;
      }
      if (row.length === 1 && (row[0] ?? '').trim() === '') continue; // a blank line
      this.total++;
      if (!this.headerOk) continue;
      if (row.length !== NOTIFY_CSV_HEADERS.length) {
        this.invalid.add(line, MESSAGES.notifyColumns, row);
        continue;
      }
      const [sno, name, imei, amount, date, template] = row.map((cell) => cell.trim()) as [
        string,
        string,
        string,
        string,
        string,
        string,
      ];
      const errors = notifyRowErrors({ name, imei, amount, date, template });
      if (errors.length > 0) {
        this.invalid.add(line, MESSAGES.notifyIncorrectFields(errors.join(', ')), row);
        continue;
      }
      const generated = notifyMessage(template as NotifyTemplate, { name, amount, date });
      this.valid.push({ sno, name, imei, amount, date, template: template as NotifyTemplate, ...generated });
    }
  }

  result(): NotifyCsvResult {
    if (this.headerOk !== true) {
      return {
        valid: [],
        invalid: [{ line: 1, error: MESSAGES.invalidHeaders, data: MESSAGES.headersNotMatched }],
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
    if (this.total === 0) result.note = NOTIFY_CSV_NO_DATA_NOTE;
    return result;
  }
}

/** Validates a Notify batch CSV (check the file's type with `csvFileTypeError` first). */
export async function validateNotifyCsv(source: CsvInput): Promise<NotifyCsvResult> {
  const validator = new NotifyCsvValidator();
  await parseCsvRows(source, (rows) => validator.push(rows));
  return validator.result();
}
