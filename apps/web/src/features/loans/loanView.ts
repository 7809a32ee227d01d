/**
 * Pure helpers of the loan panel and the Loans screen: an instalment's state on the loan's day, the
 * summary's lines, the payment form's `validate()`, and the lookup field's reading (an IMEI or a loan ref).
 */
import {
  addDays,
  displayAmount,
  isReference,
  LOAN_MESSAGES,
  type LoanInstalment,
  type LoanView,
  loansCsvText,
  localDay,
  PAYMENTS_CSV_HEADERS,
  parseAmount,
  parseDay,
} from '@lendlock/contract';
import { LOAN_LABELS as L } from './labels';

export type InstalmentStateName = 'settled' | 'partly' | 'overdue' | 'due' | 'upcoming';

/** Paid; part paid; overdue (unpaid, due before the day); due (on the day); upcoming. */
export function instalmentState(instalment: LoanInstalment, day: string): InstalmentStateName {
  if (instalment.paidMinor >= instalment.amountMinor) return 'settled';
  if (instalment.dueDate < day) return 'overdue';
  if (instalment.dueDate === day) return 'due';
  return instalment.paidMinor > 0 ? 'partly' : 'upcoming';
}

export const STATE_LABELS: Record<InstalmentStateName, string> = {
  settled: L.settled,
  partly: L.partly,
  overdue: L.overdue,
  due: L.due,
  upcoming: L.upcoming,
};

export const STATE_COLORS: Record<InstalmentStateName, string> = {
  settled: 'green',
  partly: 'yellow',
  overdue: 'red',
  due: 'orange',
  upcoming: 'gray',
};

/** The summary as label and text, in the panel's order. */
export function summaryLines(loan: LoanView): { key: string; label: string; text: string }[] {
  const { summary, currency } = loan;
  const money = (minor: number) => displayAmount(minor, currency);
  const lines: { key: string; label: string; text: string }[] = [
    {
      key: 'next-due',
      label: L.nextDue,
      text: summary.nextDue
        ? `${summary.nextDue.dueDate} · ${money(summary.nextDue.amountMinor)}`
        : L.nothingDue,
    },
    { key: 'days-overdue', label: L.daysOverdue, text: String(summary.daysOverdue) },
    { key: 'arrears', label: L.arrears, text: money(summary.arrearsMinor) },
    {
      key: 'instalments',
      label: L.instalments,
      text: L.instalmentsCount(summary.instalmentsPaid, summary.instalmentsUnpaid),
    },
    { key: 'outstanding', label: L.outstanding, text: money(summary.outstandingMinor) },
    {
      key: 'last-payment',
      label: L.lastPayment,
      text: summary.lastPayment
        ? L.paymentOn(
            money(summary.lastPayment.amountMinor),
            localDay(new Date(summary.lastPayment.paidAt)),
            summary.lastPayment.paymentRef,
          )
        : L.noPayment,
    },
    { key: 'promise', label: L.promise, text: loan.promiseToPayUntil ?? L.noPromise },
  ];
  if (summary.creditMinor > 0)
    lines.push({ key: 'credit', label: L.credit, text: money(summary.creditMinor) });
  return lines;
}

export interface PaymentFormValues {
  paymentRef: string;
  loanRef: string;
  amount: string;
  paidOn: string;
}

/**
 * The payment form's problem, or null: every field filled, the references in the API's shape, the amount
 * in the loan's currency (when known), the day a real one. The server checks again.
 */
export function validatePaymentForm(values: PaymentFormValues, currency: string | null): string | null {
  if (!values.paymentRef.trim() || !values.loanRef.trim() || !values.amount.trim() || !values.paidOn.trim())
    return L.required;
  if (!isReference(values.paymentRef.trim()))
    return `${L.paymentRef}: 1 to 100 letters, digits and . _ : / -`;
  if (!isReference(values.loanRef.trim())) return `${L.loanRef}: 1 to 100 letters, digits and . _ : / -`;
  if (currency) {
    const amount = parseAmount(values.amount, currency);
    if (!amount.ok) return amount.message;
  }
  const day = values.paidOn.trim();
  if (!parseDay(day)) return `${L.paidOn}: YYYY-MM-DD`;
  if (day > localDay()) return LOAN_MESSAGES.paidAtFuture;
  return null;
}

/**
 * The instant a payment made on `day` (YYYY-MM-DD, the operator's calendar) is recorded at: that day's
 * local midnight, so today's payment is never "in the future", whatever the browser's zone.
 */
export function paidAtOfDay(day: string): string {
  const parsed = parseDay(day);
  if (!parsed) return day;
  const date = new Date(0);
  date.setFullYear(parsed.year, parsed.month - 1, parsed.day);
  date.setHours(0, 0, 0, 0);
  return date.toISOString();
}

/** What the lookup field holds: 15 digits are an IMEI, anything else a loan reference. */
export function lookupOf(text: string): { imei: string } | { loanRef: string } | null {
  const value = text.trim();
  if (value === '') return null;
  return /^\d{15}$/.test(value) ? { imei: value } : { loanRef: value };
}

/**
 * The sample files the Loans screen offers (the columns, and a row or two to copy), dated relative to
 * `today` (the operator's day) so that each passes the validation on the day it is downloaded: a loan
 * whose instalments fall due in 30, 60 and 90 days, and two payments of the last two days.
 */
export function sampleLoansCsv(today: string): string {
  return loansCsvText([
    {
      loanRef: 'LN-1001',
      imei: '356938035643809',
      customerName: 'Asha Rao',
      currency: 'INR',
      instalments: [30, 60, 90].map((days) => ({ dueDate: addDays(today, days), amount: '1499.00' })),
    },
  ]);
}

export function samplePaymentsCsv(today: string): string {
  return `${PAYMENTS_CSV_HEADERS.join(',')}\r\nRCPT-9001,LN-1001,1499.00,${addDays(today, -2)}\r\nRCPT-9002,LN-1001,750.50,${addDays(today, -1)}T18:30:00+05:30\r\n`;
}
