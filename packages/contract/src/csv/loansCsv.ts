/**
 * The loans CSV (docs/features.md § Loans and payments): one row per instalment, in the style of the
 * batch files. The same validator runs in the console before the upload and on the server.
 *
 * - Headers `loan_ref, imei, customer_name, currency, instalment_no, due_date, amount`, in that order
 *   (case-insensitive), else the one row 'Invalid Headers' (data 'headers not matched', line 1), or what is
 *   wrong with the file's format (semicolons, tabs, UTF-16).
 * - Each row has 7 columns ('Invalid row, missing or extra columns'); its field errors are reported
 *   together as 'Incorrect fields: …' (loan_ref and imei, customer_name, currency, instalment_no from 1 to
 *   600, due_date YYYY-MM-DD, amount with at most the currency's decimals).
 * - The rows of one loan_ref agree on imei, customer_name and currency, number their instalments 1 to N
 *   without a gap or a repeat, and fall due one after the other; two loans of one file never share an
 *   IMEI. These errors are reported on the row that breaks them, or on the loan's first row.
 * - Blank lines (or rows of commas only) are skipped; `line` is the row's line in the file.
 */
import { parseDay } from '../dates';
import {
  currencyDigits,
  customerNameProblem,
  type InstalmentInput,
  isAmountText,
  isReference,
  MAX_INSTALMENTS,
  parseAmount,
  scheduleProblem,
} from '../loans';
import { LOAN_MESSAGES, MESSAGES } from '../messages';
import { headerFormatProblem, isBlankRow } from './encoding';
import { headerRow, IMEI_CSV_NO_DATA_NOTE, type InvalidRow } from './imeiCsv';
import { InvalidRowList, rowData } from './invalidRows';
import { type CsvInput, parseCsvRows } from './stream';

export const LOANS_CSV_HEADERS = [
  'loan_ref',
  'imei',
  'customer_name',
  'currency',
  'instalment_no',
  'due_date',
  'amount',
] as const;

/** A loan read from the file: its schedule in instalment order, and where it starts in the file. */
export interface CsvLoan {
  loanRef: string;
  imei: string;
  customerName: string;
  currency: string;
  instalments: InstalmentInput[];
  /** The line of its first row, and that row as a report quotes it. */
  line: number;
  data: string;
}

export interface LoansCsvResult {
  loans: CsvLoan[];
  /** The first MAX_INVALID_ROWS invalid rows, in file order. */
  invalid: InvalidRow[];
  invalidCount: number;
  /** Data rows read (instalments). */
  total: number;
  note?: string;
}

const IMEI = /^\d{15}$/;
const SEQ = /^\d{1,3}$/;

/** A header cell as compared: without a BOM, trimmed, lower case. */
export function headerCell(cell: string): string {
  return cell
    .replace(/^\uFEFF/, '')
    .trim()
    .toLowerCase();
}

/** Whether `row` is exactly `headers` (the contract's CSV header rule). */
export function headersMatch(row: readonly string[], headers: readonly string[]): boolean {
  return row.length === headers.length && row.every((cell, i) => headerCell(cell) === headers[i]);
}

interface Building extends CsvLoan {
  /** Instalment number → its due date and amount, and the line it came from. */
  bySeq: Map<number, { dueDate: string; amountMinor: number; line: number }>;
}

export class LoansCsvValidator {
  private line = 0;
  private headerOk: boolean | null = null;
  private headerProblem: string | null = null;
  private total = 0;
  private readonly invalid = new InvalidRowList();
  private readonly loans = new Map<string, Building>();
  /** IMEI → the loan_ref that has it in this file. */
  private readonly imeis = new Map<string, string>();
  /** The loan_refs with a bad row: reported there, not checked again as a whole. */
  private readonly broken = new Set<string>();

  push(rows: readonly (readonly string[])[]): void {
    for (const row of rows) {
      const line = ++this.line;
      if (this.headerOk === null) {
        this.headerOk = headersMatch(row, LOANS_CSV_HEADERS);
        if (!this.headerOk) this.headerProblem = headerFormatProblem(row);
        continue;
      }
      if (isBlankRow(row)) continue;
      this.total++;
      if (!this.headerOk) continue;
      this.check(row, line);
    }
  }

  private check(row: readonly string[], line: number): void {
    if (row.length !== LOANS_CSV_HEADERS.length) {
      this.invalid.add(line, MESSAGES.notifyColumns, row);
      return;
    }
    const [loanRef, imei, customerName, currency, seqText, dueDate, amount] = row.map((cell) =>
      cell.trim(),
    ) as [string, string, string, string, string, string, string];
    const errors: string[] = [];
    if (!isReference(loanRef)) errors.push(LOAN_MESSAGES.reference('loan_ref'));
    if (!IMEI.test(imei)) errors.push(MESSAGES.notifyImei);
    const nameProblem = customerNameProblem(customerName);
    if (nameProblem) errors.push(nameProblem);
    const digits = currencyDigits(currency);
    if (digits === null) errors.push(LOAN_MESSAGES.currency);
    const seq = SEQ.test(seqText) ? Number(seqText) : 0;
    if (seq < 1 || seq > MAX_INSTALMENTS) errors.push(LOAN_MESSAGES.instalmentNo);
    if (!parseDay(dueDate)) errors.push(LOAN_MESSAGES.dueDate);
    let amountMinor = 0;
    if (digits === null) {
      if (!isAmountText(amount)) errors.push(LOAN_MESSAGES.amountShape);
    } else {
      const parsed = parseAmount(amount, currency);
      if (parsed.ok) amountMinor = parsed.minor;
      else errors.push(parsed.message);
    }
    // The loan's other rows: the same IMEI, name and currency; each instalment once.
    const loan = isReference(loanRef) ? this.loans.get(loanRef) : undefined;
    if (loan) {
      if (imei !== loan.imei) errors.push(LOAN_MESSAGES.differs('imei', loan.line));
      if (customerName !== loan.customerName) errors.push(LOAN_MESSAGES.differs('customer_name', loan.line));
      if (currency !== loan.currency) errors.push(LOAN_MESSAGES.differs('currency', loan.line));
      const earlier = loan.bySeq.get(seq);
      if (earlier) errors.push(LOAN_MESSAGES.instalmentRepeated(earlier.line));
    } else if (isReference(loanRef) && IMEI.test(imei)) {
      const other = this.imeis.get(imei);
      if (other !== undefined && other !== loanRef) errors.push(LOAN_MESSAGES.imeiRepeated(other));
    }
    if (errors.length > 0) {
      this.invalid.add(line, MESSAGES.notifyIncorrectFields(errors.join(', ')), row);
      if (isReference(loanRef)) this.broken.add(loanRef);
      return;
    }
    const target =
      loan ??
      (() => {
        const created: Building = {
          loanRef,
          imei,
          customerName,
          currency,
          instalments: [],
          line,
          data: rowData(row),
          bySeq: new Map(),
        };
        this.loans.set(loanRef, created);
        this.imeis.set(imei, loanRef);
        return created;
      })();
    target.bySeq.set(seq, { dueDate, amountMinor, line });
  }

  result(): LoansCsvResult {
    if (this.headerOk !== true) {
      return { loans: [], invalid: [headerRow(this.headerProblem)], invalidCount: 1, total: this.total };
    }
    const loans: CsvLoan[] = [];
    for (const loan of this.loans.values()) {
      const count = loan.bySeq.size;
      const seqs = [...loan.bySeq.keys()].sort((a, b) => a - b);
      if (this.broken.has(loan.loanRef)) continue; // its bad rows are reported already
      if (seqs[0] !== 1 || seqs[count - 1] !== count) {
        this.invalid.add(loan.line, MESSAGES.notifyIncorrectFields(LOAN_MESSAGES.instalmentGap(count)), [
          loan.data,
        ]);
        continue;
      }
      const instalments = seqs.map((seq) => {
        const { dueDate, amountMinor } = loan.bySeq.get(seq) as { dueDate: string; amountMinor: number };
        return { dueDate, amountMinor };
      });
      const problem = scheduleProblem(instalments);
      if (problem) {
        this.invalid.add(loan.line, MESSAGES.notifyIncorrectFields(problem), [loan.data]);
        continue;
      }
      loans.push({
        loanRef: loan.loanRef,
        imei: loan.imei,
        customerName: loan.customerName,
        currency: loan.currency,
        instalments,
        line: loan.line,
        data: loan.data,
      });
    }
    const result: LoansCsvResult = {
      loans: this.invalid.count > 0 ? [] : loans,
      invalid: [...this.invalid.rows].sort((a, b) => a.line - b.line),
      invalidCount: this.invalid.count,
      total: this.total,
    };
    if (this.total === 0) result.note = IMEI_CSV_NO_DATA_NOTE;
    return result;
  }
}

/** Validates a loans CSV (check the file's type with `csvFileTypeError` first). */
export async function validateLoansCsv(source: CsvInput): Promise<LoansCsvResult> {
  const validator = new LoansCsvValidator();
  await parseCsvRows(source, (rows) => validator.push(rows));
  return validator.result();
}

/** A loans CSV for one loan, as the sample file and the tests write it. */
export function loansCsvText(
  loans: readonly {
    loanRef: string;
    imei: string;
    customerName: string;
    currency: string;
    instalments: readonly { dueDate: string; amount: string }[];
  }[],
): string {
  const lines = [LOANS_CSV_HEADERS.join(',')];
  for (const loan of loans)
    loan.instalments.forEach((instalment, i) => {
      const name = /[",\r\n]/.test(loan.customerName)
        ? `"${loan.customerName.replaceAll('"', '""')}"`
        : loan.customerName;
      lines.push(
        [loan.loanRef, loan.imei, name, loan.currency, i + 1, instalment.dueDate, instalment.amount].join(
          ',',
        ),
      );
    });
  return `${lines.join('\r\n')}\r\n`;
}
