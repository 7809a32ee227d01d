import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  allocatePayment,
  applyAllocation,
  currencyDigits,
  daysBetween,
  displayAmount,
  formatAmount,
  type InstalmentState,
  isAmountText,
  isReference,
  LOAN_CURRENCIES,
  loanPosition,
  MAX_AMOUNT_MINOR,
  paidAtProblem,
  parseAmount,
  parsePaidAt,
  promiseProblem,
  scheduleProblem,
} from './loans';
import { LOAN_MESSAGES } from './messages';

describe('amounts: decimal text ↔ minor units of the currency', () => {
  it.each([
    ['1234.50', 'INR', 123450],
    ['1234.5', 'INR', 123450],
    ['1234', 'INR', 123400],
    [' 0.01 ', 'USD', 1],
    ['0005', 'INR', 500],
    ['5000', 'JPY', 5000],
    ['1.234', 'KWD', 1234],
    ['10000000000', 'INR', MAX_AMOUNT_MINOR],
  ])('%j %s is %d', (text, currency, minor) => {
    expect(parseAmount(text, currency)).toEqual({ ok: true, minor });
  });

  it.each([
    ['0', 'INR', LOAN_MESSAGES.amount(2)],
    ['0.00', 'INR', LOAN_MESSAGES.amount(2)],
    ['-5', 'INR', LOAN_MESSAGES.amount(2)],
    ['1.234', 'INR', LOAN_MESSAGES.amount(2)],
    ['1.5', 'JPY', LOAN_MESSAGES.amount(0)],
    ['1,234.50', 'INR', LOAN_MESSAGES.amount(2)],
    ['1e3', 'INR', LOAN_MESSAGES.amount(2)],
    ['', 'INR', LOAN_MESSAGES.amount(2)],
    ['.5', 'INR', LOAN_MESSAGES.amount(2)],
    ['10000000000.01', 'INR', LOAN_MESSAGES.amountTooLarge],
    ['12', 'XYZ', LOAN_MESSAGES.currency],
    ['12', 'inr', LOAN_MESSAGES.currency],
  ])('%j %s is refused: %s', (text, currency, message) => {
    expect(parseAmount(text, currency)).toEqual({ ok: false, message });
  });

  it('formats back exactly, whatever the amount (no floating point)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: MAX_AMOUNT_MINOR }),
        fc.constantFrom('INR', 'JPY', 'KWD'),
        (minor, currency) => {
          expect(parseAmount(formatAmount(minor, currency), currency)).toEqual({ ok: true, minor });
        },
      ),
    );
    expect(formatAmount(5, 'INR')).toBe('0.05');
    expect(formatAmount(123450, 'INR')).toBe('1234.50');
    expect(formatAmount(5000, 'JPY')).toBe('5000');
    expect(formatAmount(-150, 'USD')).toBe('-1.50');
    expect(displayAmount(123456789, 'INR')).toBe('INR 1,234,567.89');
    expect(displayAmount(1000, 'JPY')).toBe('JPY 1,000');
  });

  it('knows the minor unit of ISO 4217 currencies', () => {
    expect([
      currencyDigits('INR'),
      currencyDigits('JPY'),
      currencyDigits('BHD'),
      currencyDigits('XXX'),
    ]).toEqual([2, 0, 3, null]);
    expect(LOAN_CURRENCIES).toContain('KES');
    expect(LOAN_CURRENCIES.every((code) => /^[A-Z]{3}$/.test(code))).toBe(true);
  });

  it('tells the shape of an amount without its currency (the payments CSV)', () => {
    expect(['1', '1.5', '1.25', '1.125', '0.01'].map(isAmountText)).toEqual([true, true, true, true, true]);
    expect(['0', '0.00', '1.1234', 'x', '', '-1'].map(isAmountText)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });
});

describe('references, days and paid_at', () => {
  it('a reference is 1 to 100 safe characters starting with a letter or digit', () => {
    expect(['L-1', 'loan/2026/07:A.1_b', 'a'.repeat(100)].map(isReference)).toEqual([true, true, true]);
    expect(['', '-L', 'a'.repeat(101), 'L 1', 'L,1', '=cmd'].map(isReference)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it('counts days across months and leap years', () => {
    expect(daysBetween('2026-01-31', '2026-03-01')).toBe(29);
    expect(daysBetween('2028-02-28', '2028-03-01')).toBe(2);
    expect(daysBetween('2026-03-01', '2026-01-31')).toBe(-29);
  });

  it('reads paid_at as a day or a date-time with its offset, never a local time', () => {
    expect(parsePaidAt('2026-07-01')?.toISOString()).toBe('2026-07-01T00:00:00.000Z');
    expect(parsePaidAt('2026-07-01T10:30:00+05:30')?.toISOString()).toBe('2026-07-01T05:00:00.000Z');
    expect(parsePaidAt('2026-07-01T10:30Z')?.toISOString()).toBe('2026-07-01T10:30:00.000Z');
    for (const bad of ['2026-07-01T10:30:00', '01/07/2026', '2026-02-30', '2026-07-01T25:00Z', 'now', ''])
      expect(parsePaidAt(bad), bad).toBeNull();
    const now = new Date('2026-07-01T12:00:00Z');
    expect(paidAtProblem('2026-07-01T12:04:00Z', now)).toBeNull();
    expect(paidAtProblem('2026-07-01T12:06:00Z', now)).toBe(LOAN_MESSAGES.paidAtFuture);
    expect(paidAtProblem('yesterday', now)).toBe(LOAN_MESSAGES.paidAt);
  });

  it('a promise to pay is for today up to 90 days ahead', () => {
    expect(promiseProblem('2026-07-01', '2026-07-01')).toBeNull();
    expect(promiseProblem('2026-09-29', '2026-07-01')).toBeNull();
    expect(promiseProblem('2026-09-30', '2026-07-01')).toBe(LOAN_MESSAGES.promiseTooFar(90));
    expect(promiseProblem('2026-06-30', '2026-07-01')).toBe(LOAN_MESSAGES.promisePast);
  });

  it('a schedule falls due one instalment after the other', () => {
    const at = (dueDate: string) => ({ dueDate, amountMinor: 100 });
    expect(scheduleProblem([at('2026-01-05'), at('2026-02-05')])).toBeNull();
    expect(scheduleProblem([at('2026-01-05'), at('2026-01-05')])).toBe(
      LOAN_MESSAGES.dueNotAfter(2, '2026-01-05'),
    );
    expect(scheduleProblem([])).toBe(LOAN_MESSAGES.instalmentCount);
    expect(scheduleProblem(Array.from({ length: 601 }, (_, i) => at(`${2000 + i}-01-01`)))).toBe(
      LOAN_MESSAGES.instalmentCount,
    );
  });
});

const schedule = (paid: number[]): InstalmentState[] =>
  ['2026-01-05', '2026-02-05', '2026-03-05', '2026-04-05'].map((dueDate, i) => ({
    seq: i + 1,
    dueDate,
    amountMinor: 1000,
    paidMinor: paid[i] ?? 0,
  }));

describe('a loan’s position on a day', () => {
  it('on a due date the instalment is due, not overdue', () => {
    expect(loanPosition(schedule([]), '2026-01-05')).toMatchObject({
      arrearsMinor: 0,
      daysOverdue: 0,
      overdueSince: null,
      nextDue: { seq: 1, dueDate: '2026-01-05', amountMinor: 1000 },
      instalmentsPaid: 0,
      instalmentsUnpaid: 4,
    });
  });

  it('counts days overdue from the oldest unpaid instalment, and the arrears of all overdue ones', () => {
    const position = loanPosition(schedule([1000, 400]), '2026-03-10');
    expect(position).toEqual({
      totalMinor: 4000,
      paidMinor: 1400,
      outstandingMinor: 2600,
      instalmentsPaid: 1,
      instalmentsUnpaid: 3,
      arrearsMinor: 1600,
      overdueInstalments: 2,
      daysOverdue: 33,
      overdueSince: '2026-02-05',
      nextDue: { seq: 4, dueDate: '2026-04-05', amountMinor: 1000 },
    });
  });

  it('a paid loan is neither overdue nor due', () => {
    expect(loanPosition(schedule([1000, 1000, 1000, 1000]), '2026-12-01')).toMatchObject({
      outstandingMinor: 0,
      arrearsMinor: 0,
      daysOverdue: 0,
      nextDue: null,
      instalmentsPaid: 4,
    });
  });

  it('after the last due date, nothing is next: all is arrears', () => {
    expect(loanPosition(schedule([1000]), '2026-05-01')).toMatchObject({
      arrearsMinor: 3000,
      daysOverdue: daysBetween('2026-02-05', '2026-05-01'),
      nextDue: null,
    });
  });
});

describe('allocation: oldest unpaid instalment first', () => {
  it('completes the oldest, then pays into the next', () => {
    const { allocations, creditMinor } = allocatePayment(schedule([1000, 400]), 900);
    expect(allocations).toEqual([
      { seq: 2, addMinor: 600, paidMinor: 1000, settles: true },
      { seq: 3, addMinor: 300, paidMinor: 300, settles: false },
    ]);
    expect(creditMinor).toBe(0);
  });

  it('keeps what exceeds the balance as credit', () => {
    const { allocations, creditMinor } = allocatePayment(schedule([1000, 1000, 1000]), 1500);
    expect(allocations).toEqual([{ seq: 4, addMinor: 1000, paidMinor: 1000, settles: true }]);
    expect(creditMinor).toBe(500);
  });

  it('never pays more than owed, never loses a unit, never pays a later instalment before an earlier one', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 10_000 }), { minLength: 1, maxLength: 24 }),
        fc.array(fc.integer({ min: 1, max: 20_000 }), { maxLength: 10 }),
        (amounts, payments) => {
          let instalments: InstalmentState[] = amounts.map((amountMinor, i) => ({
            seq: i + 1,
            dueDate: `2026-01-${String(i + 1).padStart(2, '0')}`,
            amountMinor,
            paidMinor: 0,
          }));
          let credit = 0;
          for (const payment of payments) {
            const { allocations, creditMinor } = allocatePayment(instalments, payment);
            expect(allocations.reduce((sum, a) => sum + a.addMinor, 0) + creditMinor).toBe(payment);
            instalments = applyAllocation(instalments, allocations);
            credit += creditMinor;
          }
          const total = amounts.reduce((a, b) => a + b, 0);
          const paid = instalments.reduce((sum, i) => sum + i.paidMinor, 0);
          const received = payments.reduce((a, b) => a + b, 0);
          expect(paid).toBe(Math.min(total, received));
          expect(credit).toBe(Math.max(0, received - total));
          // Paid instalments form a prefix: at most one partly paid, and only right after the paid ones.
          const firstOpen = instalments.findIndex((i) => i.paidMinor < i.amountMinor);
          if (firstOpen >= 0)
            expect(instalments.slice(firstOpen + 1).every((i) => i.paidMinor === 0)).toBe(true);
        },
      ),
    );
  });
});
