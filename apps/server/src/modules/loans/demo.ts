/**
 * The demo's loans (docs/features.md § The demo fleet): on the first start of the embedded demo (never on
 * PostgreSQL), about a tenth of the fleet gets a monthly loan through the same service the console uses —
 * some current, some due in a few days or today, some overdue by 2 to 40 days (one with a promise to pay),
 * one nearly paid, one paid — with the payments that got them there (a payments file, and a few recorded
 * in the console), so Device Details, the Loans screen and the collections plan show a live book. The
 * payments are recorded at the demo's start but dated when they were paid: the plan's "payment in the last
 * 24 hours" reads that date, so the overdue loans' locks are not skipped.
 */
import { addDays, type CsvPayment, formatAmount } from '@lendlock/contract';
import type { Principal } from '../../core/principal';
import { devicesOfImeis } from './repository';
import type { LoanService } from './service';

/** One kind of loan: its first due date (days from today), instalments paid in full, and part of the next. */
interface Profile {
  firstDue: number;
  paid: number;
  /** Share of the next instalment paid. */
  partly?: number;
  /** A promise to pay, days from today. */
  promise?: number;
}

/** In this order: a small fleet's few loans include two the collections plan locks (its dry run shows them). */
const PROFILES: readonly Profile[] = [
  { firstDue: -95, paid: 4 }, // current: next due in 25 days
  { firstDue: -100, paid: 2 }, // 40 days overdue
  { firstDue: -96, paid: 3 }, // 6 days overdue
  { firstDue: -87, paid: 3 }, // due in 3 days
  { firstDue: -90, paid: 3 }, // due today
  { firstDue: -92, paid: 3 }, // 2 days overdue
  { firstDue: -102, paid: 3, partly: 0.5 }, // 12 days overdue, half paid
  { firstDue: -98, paid: 3, promise: 2 }, // 8 days overdue, promised to pay in 2 days
  { firstDue: -320, paid: 11 }, // nearly paid: the last instalment in 10 days
  { firstDue: -340, paid: 12 }, // paid
];

const NAMES = [
  'Asha Rao',
  'Ravi Kumar',
  'Meena Iyer',
  'Arjun Singh',
  'Fatima Shaikh',
  'Suresh Patel',
  'Lakshmi Nair',
  'Imran Khan',
  'Priya Das',
  'Vikram Joshi',
];

const INSTALMENTS = 12;
/** Days between instalments; a loan begins (its phone registered) a step before the first falls due. */
export const STEP_DAYS = 30;
const INSTALMENT_MINOR = 149_900;
const CURRENCY = 'INR';

export async function seedDemoLoans(
  loans: LoanService,
  db: Parameters<typeof devicesOfImeis>[0],
  imeis: readonly string[],
  actor: Principal,
): Promise<number> {
  const devices = await devicesOfImeis(db, imeis);
  const enrolled = imeis.filter((imei) => devices.get(imei)?.claimstatus === 'ENROLLED');
  const chosen = enrolled.filter((_, i) => i % 10 === 3);
  if (chosen.length === 0) return 0;
  const { day: today } = loans.today();
  const caller = { actor, address: '127.0.0.1' };
  const amount = formatAmount(INSTALMENT_MINOR, CURRENCY);
  const plans = chosen.map((imei, i) => {
    const profile = PROFILES[i % PROFILES.length] as Profile;
    const loanRef = `LN-${String(24001 + i)}`;
    const dues = Array.from({ length: INSTALMENTS }, (_, n) =>
      addDays(today, profile.firstDue + n * STEP_DAYS),
    );
    return { imei, loanRef, profile, dues, name: NAMES[i % NAMES.length] as string };
  });
  await loans.importLoans(
    caller,
    plans.map((plan, i) => ({
      loanRef: plan.loanRef,
      imei: plan.imei,
      customerName: plan.name,
      currency: CURRENCY,
      instalments: plan.dues.map((dueDate) => ({ dueDate, amountMinor: INSTALMENT_MINOR })),
      line: i + 1,
      data: plan.loanRef,
    })),
    { replace: false, source: 'CSV' },
  );
  // Each paid instalment paid within a few days before its due date; a part of the next one after it.
  const payments: CsvPayment[] = [];
  for (const plan of plans) {
    plan.dues.slice(0, plan.profile.paid).forEach((due, n) => {
      const paidAt = `${addDays(due, -(n % 3))}T10:${String(10 + n).padStart(2, '0')}:00+05:30`;
      payments.push({
        paymentRef: `PAY-${plan.loanRef}-${n + 1}`,
        loanRef: plan.loanRef,
        amount,
        paidAt: new Date(paidAt).toISOString(),
        line: payments.length + 2,
        data: plan.loanRef,
      });
    });
  }
  await loans.recordPayments(caller, payments);
  for (const plan of plans) {
    const { partly, promise } = plan.profile;
    if (partly !== undefined)
      await loans.recordPayment(caller, {
        paymentRef: `PAY-${plan.loanRef}-part`,
        loanRef: plan.loanRef,
        amount: formatAmount(Math.round(INSTALMENT_MINOR * partly), CURRENCY),
        paidAt: `${addDays(today, -3)}T16:45:00+05:30`,
      });
    if (promise !== undefined)
      await loans.setPromise(caller, { loanRef: plan.loanRef, until: addDays(today, promise) });
  }
  return plans.length;
}
