/**
 * The payments CSV (docs/features.md § Loans and payments): `payment_ref, loan_ref, amount, paid_at`, one
 * payment per row, in the style of the batch files, checked the same way in the console and on the server.
 *
 * - Headers in that order (case-insensitive), else 'Invalid Headers' (or the file's format problem).
 * - Each row has 4 columns; its field errors are reported together as 'Incorrect fields: …': the two
 *   references, an amount greater than 0 (at most 3 decimals here; the server checks the loan's currency),
 *   `paid_at` a day or a date-time with its offset, not in the future; a payment_ref appears once a file.
 * - The server then checks what only it knows (the loan exists and is the caller's, the amount fits its
 *   currency, a payment_ref recorded before has the same loan and amount) and reports those rows the same
 *   way.
 */
import { isAmountText, isReference, paidAtProblem, parsePaidAt } from '../loans';
import { LOAN_MESSAGES, MESSAGES } from '../messages';
import { headerFormatProblem, isBlankRow } from './encoding';
import { headerRow, IMEI_CSV_NO_DATA_NOTE, type InvalidRow } from './imeiCsv';
import { InvalidRowList, rowData } from './invalidRows';
import { headersMatch } from './loansCsv';
import { type CsvInput, parseCsvRows } from './stream';

export const PAYMENTS_CSV_HEADERS = ['payment_ref', 'loan_ref', 'amount', 'paid_at'] as const;

export interface CsvPayment {
  paymentRef: string;
  loanRef: string;
  /** Decimal text, as in the file. */
  amount: string;
  /** ISO 8601 instant. */
  paidAt: string;
  line: number;
  data: string;
}

export interface PaymentsCsvResult {
  payments: CsvPayment[];
  invalid: InvalidRow[];
  invalidCount: number;
  total: number;
  note?: string;
}

export interface PaymentsCsvOptions {
  /** The time a paid_at may not be after (default: now where the code runs). */
  now?: Date;
}

export class PaymentsCsvValidator {
  private line = 0;
  private headerOk: boolean | null = null;
  private headerProblem: string | null = null;
  private total = 0;
  private readonly invalid = new InvalidRowList();
  private readonly payments: CsvPayment[] = [];
  /** payment_ref → its line. */
  private readonly seen = new Map<string, number>();
  private readonly now: Date;

  constructor(options: PaymentsCsvOptions = {}) {
    this.now = options.now ?? new Date();
  }

  push(rows: readonly (readonly string[])[]): void {
    for (const row of rows) {
      const line = ++this.line;
      if (this.headerOk === null) {
        this.headerOk = headersMatch(row, PAYMENTS_CSV_HEADERS);
        if (!this.headerOk) this.headerProblem = headerFormatProblem(row);
        continue;
      }
      if (isBlankRow(row)) continue;
      this.total++;
      if (!this.headerOk) continue;
      if (row.length !== PAYMENTS_CSV_HEADERS.length) {
        this.invalid.add(line, MESSAGES.notifyColumns, row);
        continue;
      }
      const [paymentRef, loanRef, amount, paidAt] = row.map((cell) => cell.trim()) as [
        string,
        string,
        string,
        string,
      ];
      const errors: string[] = [];
      if (!isReference(paymentRef)) errors.push(LOAN_MESSAGES.reference('payment_ref'));
      else {
        const earlier = this.seen.get(paymentRef);
        if (earlier !== undefined) errors.push(LOAN_MESSAGES.paymentRepeated(earlier));
        else this.seen.set(paymentRef, line);
      }
      if (!isReference(loanRef)) errors.push(LOAN_MESSAGES.reference('loan_ref'));
      if (!isAmountText(amount)) errors.push(LOAN_MESSAGES.amountShape);
      const timeProblem = paidAtProblem(paidAt, this.now);
      if (timeProblem) errors.push(timeProblem);
      if (errors.length > 0) {
        this.invalid.add(line, MESSAGES.notifyIncorrectFields(errors.join(', ')), row);
        continue;
      }
      this.payments.push({
        paymentRef,
        loanRef,
        amount,
        paidAt: (parsePaidAt(paidAt) as Date).toISOString(),
        line,
        data: rowData(row),
      });
    }
  }

  result(): PaymentsCsvResult {
    if (this.headerOk !== true)
      return { payments: [], invalid: [headerRow(this.headerProblem)], invalidCount: 1, total: this.total };
    const result: PaymentsCsvResult = {
      payments: this.invalid.count > 0 ? [] : this.payments,
      invalid: this.invalid.rows,
      invalidCount: this.invalid.count,
      total: this.total,
    };
    if (this.total === 0) result.note = IMEI_CSV_NO_DATA_NOTE;
    return result;
  }
}

/** Validates a payments CSV (check the file's type with `csvFileTypeError` first). */
export async function validatePaymentsCsv(
  source: CsvInput,
  options: PaymentsCsvOptions = {},
): Promise<PaymentsCsvResult> {
  const validator = new PaymentsCsvValidator(options);
  await parseCsvRows(source, (rows) => validator.push(rows));
  return validator.result();
}
