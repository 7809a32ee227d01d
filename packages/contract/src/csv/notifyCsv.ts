/**
 * The Notify batch CSV (spec §3 Notify CSV columns, §5 Notify CSV): headers sno, name, imei1, amount,
 * date, template in that order; each row has 6 columns; the IMEI has 15 digits; the template is Pre,
 * Post or Due; the amount a number with up to 2 decimals; the date DD/MM/YYYY. A row's errors are
 * reported together as 'Incorrect fields: …'. Each valid row gets its generated header and message.
 */
import { MESSAGES } from '../messages';
import { type NotifyTemplate, notifyMessage } from '../notify';
import type { InvalidRow } from './imeiCsv';
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
  invalid: InvalidRow[];
  total: number;
  note?: string;
}

export const NOTIFY_CSV_NO_DATA_NOTE = 'The file has no data rows: there is nothing to process.';

const IMEI = /^\d{15}$/;
const AMOUNT = /^\d+(\.\d{1,2})?$/;
const DATE = /^(\d{2})\/(\d{2})\/(\d{4})$/;
const TEMPLATES: readonly string[] = ['Pre', 'Post', 'Due'];

/** DD/MM/YYYY naming a real calendar day. */
export function isDdMmYyyy(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [day, month, year] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The field errors of one notify row (empty when valid). */
export function notifyRowErrors(fields: {
  imei: string;
  amount: string;
  date: string;
  template: string;
}): string[] {
  const errors: string[] = [];
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
  private readonly invalid: InvalidRow[] = [];

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
      const data = row.join(',');
      if (row.length !== NOTIFY_CSV_HEADERS.length) {
        this.invalid.push({ line, error: MESSAGES.notifyColumns, data });
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
      const errors = notifyRowErrors({ imei, amount, date, template });
      if (errors.length > 0) {
        this.invalid.push({ line, error: MESSAGES.notifyIncorrectFields(errors.join(', ')), data });
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
        total: this.total,
      };
    }
    const result: NotifyCsvResult = { valid: this.valid, invalid: this.invalid, total: this.total };
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
