import {
  LOAN_MESSAGES,
  type LoanView,
  localDay,
  validateLoansCsv,
  validatePaymentsCsv,
} from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, refusedRows } from '../../api/client';
import { fetchLoan } from '../../api/loans';
import { fakeApi } from '../../test/fakeApi';
import { LOAN_LABELS as L } from './labels';
import {
  instalmentState,
  lookupOf,
  paidAtOfDay,
  sampleLoansCsv,
  samplePaymentsCsv,
  summaryLines,
  validatePaymentForm,
} from './loanView';

const loan = (overrides: Partial<LoanView['summary']> = {}): LoanView => ({
  loanRef: 'LN-1',
  retailerPhone: null,
  imei: '356938035643809',
  customerName: 'Asha Rao',
  currency: 'INR',
  status: 'OPEN',
  promiseToPayUntil: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: 'admin@lendlock.com',
  summary: {
    asOf: '2026-03-10',
    timeZone: 'Asia/Kolkata',
    totalMinor: 300000,
    paidMinor: 100000,
    outstandingMinor: 200000,
    arrearsMinor: 100000,
    creditMinor: 0,
    daysOverdue: 5,
    overdueSince: '2026-03-05',
    instalmentsPaid: 1,
    instalmentsUnpaid: 2,
    nextDue: { seq: 3, dueDate: '2026-04-05', amountMinor: 100000 },
    lastPayment: {
      paymentRef: 'RCPT-1',
      amountMinor: 100000,
      paidAt: '2026-02-04T10:00:00.000Z',
      receivedAt: '2026-02-04T10:00:01.000Z',
      source: 'CSV',
      recordedBy: 'admin@lendlock.com',
      reversedAt: null,
      reversedBy: null,
      reversalReason: null,
    },
    ...overrides,
  },
  instalments: [],
  payments: [],
});

describe('the loan panel’s summary', () => {
  it('shows next due, days overdue, arrears, instalments, last payment and promise, in that order', () => {
    expect(summaryLines(loan()).map((l) => [l.label, l.text])).toEqual([
      [L.nextDue, '2026-04-05 · INR 1,000.00'],
      [L.daysOverdue, '5'],
      [L.arrears, 'INR 1,000.00'],
      [L.instalments, '1 paid · 2 unpaid'],
      [L.outstanding, 'INR 2,000.00'],
      [L.lastPayment, `INR 1,000.00 on ${localDay(new Date('2026-02-04T10:00:00.000Z'))} (RCPT-1)`],
      [L.promise, L.noPromise],
    ]);
  });

  it('says when nothing more is due, no payment was made, and shows a credit', () => {
    const lines = summaryLines(loan({ nextDue: null, lastPayment: null, creditMinor: 50 }));
    expect(lines.find((l) => l.key === 'next-due')?.text).toBe(L.nothingDue);
    expect(lines.find((l) => l.key === 'last-payment')?.text).toBe(L.noPayment);
    expect(lines.at(-1)).toEqual({ key: 'credit', label: L.credit, text: 'INR 0.50' });
  });

  it('names each instalment’s state on the loan’s day', () => {
    const at = (dueDate: string, paidMinor: number) => ({
      seq: 1,
      dueDate,
      amountMinor: 100,
      paidMinor,
      paidAt: null,
    });
    expect(
      [
        at('2026-03-01', 100),
        at('2026-03-01', 50),
        at('2026-03-10', 0),
        at('2026-04-01', 20),
        at('2026-04-01', 0),
      ].map((i) => instalmentState(i, '2026-03-10')),
    ).toEqual(['settled', 'overdue', 'due', 'partly', 'upcoming']);
  });
});

describe('the payment form', () => {
  const form = { paymentRef: 'RCPT-7', loanRef: 'LN-1', amount: '100.50', paidOn: '2026-01-05' };

  it('passes a filled form, and says what is missing or wrong', () => {
    expect(validatePaymentForm(form, 'INR')).toBeNull();
    expect(validatePaymentForm({ ...form, paymentRef: ' ' }, 'INR')).toBe(L.required);
    expect(validatePaymentForm({ ...form, amount: '100.505' }, 'INR')).toBe(LOAN_MESSAGES.amount(2));
    expect(validatePaymentForm({ ...form, amount: '100.5' }, 'JPY')).toBe(LOAN_MESSAGES.amount(0));
    expect(validatePaymentForm({ ...form, paidOn: '2026-02-30' }, 'INR')).toMatch(/^Paid on/);
    expect(validatePaymentForm({ ...form, paymentRef: 'RCPT 7' }, null)).toMatch(/^Payment reference/);
    const tomorrow = new Date(Date.now() + 36 * 3_600_000);
    expect(validatePaymentForm({ ...form, paidOn: localDay(tomorrow) }, 'INR')).toBe(
      LOAN_MESSAGES.paidAtFuture,
    );
  });

  it('records a payment of a day at that day’s local midnight, never in the future', () => {
    const today = localDay();
    const instant = new Date(paidAtOfDay(today));
    expect(instant.getTime()).toBeLessThanOrEqual(Date.now());
    expect(localDay(instant)).toBe(today);
  });
});

describe('the Loans screen', () => {
  it('reads 15 digits as an IMEI and anything else as a loan reference', () => {
    expect(lookupOf(' 356938035643809 ')).toEqual({ imei: '356938035643809' });
    expect(lookupOf('LN-1')).toEqual({ loanRef: 'LN-1' });
    expect(lookupOf('  ')).toBeNull();
  });

  it('offers sample files its own validators accept on the day they are made', async () => {
    for (const [today, now] of [
      ['2026-11-28', '2026-11-27T23:27:00Z'], // 04:57 in Kolkata
      ['2027-01-01', '2027-01-01T00:00:00Z'],
    ] as const) {
      expect((await validateLoansCsv(sampleLoansCsv(today))).invalid).toEqual([]);
      const payments = await validatePaymentsCsv(samplePaymentsCsv(today), { now: new Date(now) });
      expect(payments.invalid, today).toEqual([]);
      expect(payments.payments).toHaveLength(2);
    }
  });

  it('a loan that is not there is null; a refusal’s rows are read from the server’s answer', async () => {
    const { api, calls } = fakeApi(() => {
      throw new ApiError(404, { status: 'error', code: 'NOT_FOUND', message: LOAN_MESSAGES.noLoanForImei });
    });
    expect(await fetchLoan(api, { imei: '356938035643809' })).toBeNull();
    expect(calls[0]?.script).toBe('v2/loans/get');
    const refusal = new ApiError(400, {
      status: 'error',
      code: 'VALIDATION_FAILED',
      message: LOAN_MESSAGES.loansIncorrect,
      invalid: [{ line: 2, error: LOAN_MESSAGES.unknownImei, data: 'LN-1,1' }],
      invalidCount: 1,
    });
    expect(refusedRows(refusal)).toEqual({
      invalid: [{ line: 2, error: LOAN_MESSAGES.unknownImei, data: 'LN-1,1' }],
      invalidCount: 1,
    });
    expect(refusedRows(new ApiError(409, { message: 'x' }))).toBeNull();
  });
});
