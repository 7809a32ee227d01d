/**
 * Loans and payments, the pure part (docs/features.md § Loans and payments): one implementation of each
 * rule, used by the server (import, payments, Device Details, the collections engine) and by the console.
 *
 * - Amounts travel as decimal text ("1234.50") and are kept as integers in the minor unit of the loan's
 *   ISO 4217 currency (paise, cents; none for JPY, three digits for KWD): `parseAmount`, `formatAmount`.
 * - A loan's position on a day (`loanPosition`): an instalment is *overdue* on day D when it is not fully
 *   paid and its due date is before D (on its due date it is due, not late). The *arrears* are the unpaid
 *   amounts of the overdue instalments; *days overdue* is D minus the due date of the oldest overdue one
 *   (0 when none); the *next due* instalment is the first unpaid one due on D or later.
 * - A payment pays the oldest unpaid instalment first (`allocatePayment`); what exceeds the whole balance
 *   is the loan's credit, never refused (a lender's record of money received is a fact).
 */
import { addDays, parseDay } from './dates';
import { LOAN_MESSAGES, MESSAGES } from './messages';
import { unstorableText } from './text';

/**
 * ISO 4217 active currencies and the digits of their minor unit (2 unless listed otherwise). Funds,
 * precious metals and test codes are left out: a loan is not made in them.
 */
const ISO_4217_TWO =
  'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN BZD CAD CDF CHF ' +
  'CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GTQ GYD HKD HNL HTG HUF IDR ' +
  'ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN ' +
  'MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS ' +
  'SRD SSP STN SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG';
const ISO_4217_ZERO = 'BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF';
const ISO_4217_THREE = 'BHD IQD JOD KWD LYD OMR TND';

const CURRENCY_DIGITS: ReadonlyMap<string, number> = new Map([
  ...ISO_4217_TWO.split(' ').map((code) => [code, 2] as const),
  ...ISO_4217_ZERO.split(' ').map((code) => [code, 0] as const),
  ...ISO_4217_THREE.split(' ').map((code) => [code, 3] as const),
]);

/** The currencies a loan may be in (ISO 4217 codes). */
export const LOAN_CURRENCIES: readonly string[] = [...CURRENCY_DIGITS.keys()].sort();

/** The digits of a currency's minor unit (INR 2, JPY 0, KWD 3), or null for a code that is not one. */
export function currencyDigits(currency: string): number | null {
  return CURRENCY_DIGITS.get(currency) ?? null;
}

/** The currencies whose minor unit has `digits` digits (the collections plan reads amounts in SQL with them). */
export function currenciesWithDigits(digits: number): string[] {
  return LOAN_CURRENCIES.filter((code) => CURRENCY_DIGITS.get(code) === digits);
}

/** The largest amount of one instalment or payment, in minor units (sums stay exact in a JS number). */
export const MAX_AMOUNT_MINOR = 1_000_000_000_000;
/** The most instalments a loan may have (50 years of monthly ones). */
export const MAX_INSTALMENTS = 600;
/** How far ahead a promise to pay may reach, in days from today. */
export const PROMISE_MAX_DAYS = 90;
/** The longest customer name kept. */
export const MAX_CUSTOMER_NAME = 200;

const DECIMAL = /^(\d{1,16})(?:\.(\d{1,6}))?$/;

export type AmountParse = { ok: true; minor: number } | { ok: false; message: string };

/**
 * Decimal text ("1234.50", "1234", "0.5") to minor units of `currency`: digits with at most the
 * currency's decimals, greater than 0, at most MAX_AMOUNT_MINOR. Exact (no floating point).
 */
export function parseAmount(text: string, currency: string): AmountParse {
  const digits = currencyDigits(currency);
  if (digits === null) return { ok: false, message: LOAN_MESSAGES.currency };
  const match = DECIMAL.exec(text.trim());
  const fraction = match?.[2] ?? '';
  if (!match || fraction.length > digits) return { ok: false, message: LOAN_MESSAGES.amount(digits) };
  const minor = Number((match[1] as string) + fraction.padEnd(digits, '0'));
  if (minor <= 0) return { ok: false, message: LOAN_MESSAGES.amount(digits) };
  if (minor > MAX_AMOUNT_MINOR) return { ok: false, message: LOAN_MESSAGES.amountTooLarge };
  return { ok: true, minor };
}

/** Whether `text` has the shape of an amount in some currency (the payments CSV checks it without the loan). */
export function isAmountText(text: string): boolean {
  const match = DECIMAL.exec(text.trim());
  return match !== null && (match[2] ?? '').length <= 3 && /[1-9]/.test(text);
}

/** Minor units as the decimal text the API takes: 123450 INR → "1234.50", 5000 JPY → "5000". */
export function formatAmount(minor: number, currency: string): string {
  const digits = currencyDigits(currency) ?? 2;
  const negative = minor < 0;
  const text = String(Math.abs(Math.trunc(minor))).padStart(digits + 1, '0');
  const whole = digits === 0 ? text : text.slice(0, -digits);
  const fraction = digits === 0 ? '' : `.${text.slice(-digits)}`;
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/** An amount for people: the currency and the decimal text with thousands separated, "INR 1,234.50". */
export function displayAmount(minor: number, currency: string): string {
  const [whole = '', fraction] = formatAmount(minor, currency).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${currency} ${grouped}${fraction === undefined ? '' : `.${fraction}`}`;
}

const REFERENCE = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,99}$/;

/** A lender's id of a loan or a payment: 1 to 100 letters, digits and . _ : / -, starting with a letter or digit. */
export function isReference(text: string): boolean {
  return REFERENCE.test(text);
}

/** The problem with a customer name (trimmed), or null. */
export function customerNameProblem(name: string): string | null {
  if (unstorableText(name)) return LOAN_MESSAGES.customerNameUnstorable;
  if (name.length === 0 || name.length > MAX_CUSTOMER_NAME) return LOAN_MESSAGES.customerName;
  return null;
}

/** Days from `from` to `to` (YYYY-MM-DD calendar days; negative when `to` is earlier). */
export function daysBetween(from: string, to: string): number {
  const start = parseDay(from);
  const end = parseDay(to);
  if (!start || !end) throw new RangeError(`Not YYYY-MM-DD calendar days: ${from}, ${to}`);
  const ms = (d: { year: number; month: number; day: number }) => {
    const date = new Date(0);
    date.setUTCFullYear(d.year, d.month - 1, d.day);
    return date.getTime();
  };
  return Math.round((ms(end) - ms(start)) / 86_400_000);
}

/**
 * `paid_at` of a payment: a day (`2026-07-01`, read as 00:00 UTC) or an ISO 8601 date-time with its
 * offset (`2026-07-01T10:30:00+05:30`, `…Z`); null for anything else. A time without an offset is refused:
 * it would mean a different instant in every time zone.
 */
export function parsePaidAt(text: string): Date | null {
  const value = text.trim();
  const match =
    /^(\d{4}-\d{2}-\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(Z|[+-]\d{2}:\d{2}))?$/.exec(value);
  if (!match || !parseDay(match[1] as string)) return null;
  if (match[2] === undefined) return new Date(`${match[1]}T00:00:00Z`);
  if (Number(match[2]) > 23 || Number(match[3]) > 59 || Number(match[4] ?? 0) > 59) return null;
  const offset = match[5] as string;
  if (offset !== 'Z' && (Number(offset.slice(1, 3)) > 18 || Number(offset.slice(4)) > 59)) return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** How far in the future a payment's `paid_at` may be (the lender's clock may run a little ahead). */
export const PAID_AT_FUTURE_SKEW_MS = 5 * 60_000;

/** The problem with a payment's `paid_at` against `now`, or null. */
export function paidAtProblem(text: string, now: Date = new Date()): string | null {
  const paidAt = parsePaidAt(text);
  if (!paidAt) return LOAN_MESSAGES.paidAt;
  if (paidAt.getTime() > now.getTime() + PAID_AT_FUTURE_SKEW_MS) return LOAN_MESSAGES.paidAtFuture;
  return null;
}

// ---- A loan's schedule and its position on a day ----

export interface InstalmentInput {
  /** YYYY-MM-DD. */
  dueDate: string;
  amountMinor: number;
}

/**
 * The problem with a schedule (instalments in order, numbered from 1), or null: 1 to MAX_INSTALMENTS
 * instalments, each due later than the one before.
 */
export function scheduleProblem(instalments: readonly InstalmentInput[]): string | null {
  if (instalments.length === 0 || instalments.length > MAX_INSTALMENTS) return LOAN_MESSAGES.instalmentCount;
  for (let i = 1; i < instalments.length; i++) {
    const before = instalments[i - 1] as InstalmentInput;
    if ((instalments[i] as InstalmentInput).dueDate <= before.dueDate)
      return LOAN_MESSAGES.dueNotAfter(i + 1, before.dueDate);
  }
  return null;
}

export interface InstalmentState {
  seq: number;
  /** YYYY-MM-DD. */
  dueDate: string;
  amountMinor: number;
  paidMinor: number;
}

export interface LoanPosition {
  totalMinor: number;
  /** Paid of the instalments (a credit beyond them is not counted here). */
  paidMinor: number;
  outstandingMinor: number;
  instalmentsPaid: number;
  instalmentsUnpaid: number;
  /** Unpaid amounts of the instalments due before the day. */
  arrearsMinor: number;
  overdueInstalments: number;
  /** The day minus the due date of the oldest overdue instalment; 0 when none is overdue. */
  daysOverdue: number;
  /** The due date of the oldest overdue instalment, or null. */
  overdueSince: string | null;
  /** The first unpaid instalment due on the day or later, with what is left to pay of it. */
  nextDue: { seq: number; dueDate: string; amountMinor: number } | null;
}

const settled = (i: InstalmentState) => i.paidMinor >= i.amountMinor;

/** Where a loan stands on `day` (YYYY-MM-DD): see the rules at the top of this file. */
export function loanPosition(instalments: readonly InstalmentState[], day: string): LoanPosition {
  const position: LoanPosition = {
    totalMinor: 0,
    paidMinor: 0,
    outstandingMinor: 0,
    instalmentsPaid: 0,
    instalmentsUnpaid: 0,
    arrearsMinor: 0,
    overdueInstalments: 0,
    daysOverdue: 0,
    overdueSince: null,
    nextDue: null,
  };
  const ordered = [...instalments].sort((a, b) => a.seq - b.seq);
  for (const instalment of ordered) {
    const left = Math.max(0, instalment.amountMinor - instalment.paidMinor);
    position.totalMinor += instalment.amountMinor;
    position.paidMinor += Math.min(instalment.paidMinor, instalment.amountMinor);
    position.outstandingMinor += left;
    if (settled(instalment)) {
      position.instalmentsPaid++;
      continue;
    }
    position.instalmentsUnpaid++;
    if (instalment.dueDate < day) {
      position.arrearsMinor += left;
      position.overdueInstalments++;
      if (position.overdueSince === null || instalment.dueDate < position.overdueSince)
        position.overdueSince = instalment.dueDate;
    } else if (position.nextDue === null) {
      position.nextDue = { seq: instalment.seq, dueDate: instalment.dueDate, amountMinor: left };
    }
  }
  if (position.overdueSince !== null) position.daysOverdue = daysBetween(position.overdueSince, day);
  return position;
}

export interface Allocation {
  seq: number;
  /** What this payment adds to the instalment. */
  addMinor: number;
  /** The instalment's paid amount after it. */
  paidMinor: number;
  /** The payment completed the instalment. */
  settles: boolean;
}

/**
 * A payment of `amountMinor` over the instalments, oldest unpaid first (by number, which is due-date
 * order). Returns what each touched instalment gets and the credit left over once all are paid.
 */
export function allocatePayment(
  instalments: readonly InstalmentState[],
  amountMinor: number,
): { allocations: Allocation[]; creditMinor: number } {
  let left = amountMinor;
  const allocations: Allocation[] = [];
  for (const instalment of [...instalments].sort((a, b) => a.seq - b.seq)) {
    if (left <= 0) break;
    const open = instalment.amountMinor - instalment.paidMinor;
    if (open <= 0) continue;
    const add = Math.min(open, left);
    left -= add;
    allocations.push({
      seq: instalment.seq,
      addMinor: add,
      paidMinor: instalment.paidMinor + add,
      settles: add === open,
    });
  }
  return { allocations, creditMinor: left };
}

/** The instalments after a payment's allocation (a new list; the input is not changed). */
export function applyAllocation(
  instalments: readonly InstalmentState[],
  allocations: readonly Allocation[],
): InstalmentState[] {
  const bySeq = new Map(allocations.map((a) => [a.seq, a.paidMinor]));
  return instalments.map((i) => ({ ...i, paidMinor: bySeq.get(i.seq) ?? i.paidMinor }));
}

/** The day `days` after `day`, for a promise-to-pay bound (re-exported for the console's date picker). */
export function latestPromiseDay(today: string): string {
  return addDays(today, PROMISE_MAX_DAYS);
}

/** The problem with a promise-to-pay date against today (both YYYY-MM-DD), or null. */
export function promiseProblem(until: string, today: string): string | null {
  if (until < today) return LOAN_MESSAGES.promisePast;
  if (until > latestPromiseDay(today)) return LOAN_MESSAGES.promiseTooFar(PROMISE_MAX_DAYS);
  return null;
}

// ---- A loan sent as JSON (the API's import), checked with the CSV's rules ----

export interface CheckedLoan {
  loanRef: string;
  imei: string;
  customerName: string;
  currency: string;
  instalments: InstalmentInput[];
}

const IMEI = /^\d{15}$/;

/**
 * The field errors of a loan sent to the API (the rules of a loans CSV row, each instalment's errors
 * named by its number), or the loan with its amounts in minor units. Text fields are trimmed.
 */
export function checkLoanInput(input: {
  loanRef: string;
  imei: string;
  customerName: string;
  currency: string;
  instalments: readonly { dueDate: string; amount: string }[];
}): { loan: CheckedLoan; errors?: undefined } | { loan?: undefined; errors: string[] } {
  const loanRef = input.loanRef.trim();
  const imei = input.imei.trim();
  const customerName = input.customerName.trim();
  const currency = input.currency.trim();
  const errors: string[] = [];
  if (!isReference(loanRef)) errors.push(LOAN_MESSAGES.reference('loan_ref'));
  if (!IMEI.test(imei)) errors.push(MESSAGES.notifyImei);
  const nameProblem = customerNameProblem(customerName);
  if (nameProblem) errors.push(nameProblem);
  const known = currencyDigits(currency) !== null;
  if (!known) errors.push(LOAN_MESSAGES.currency);
  const instalments: InstalmentInput[] = [];
  input.instalments.forEach((instalment, i) => {
    const dueDate = instalment.dueDate.trim();
    if (!parseDay(dueDate)) errors.push(LOAN_MESSAGES.ofInstalment(i + 1, LOAN_MESSAGES.dueDate));
    if (!known) {
      if (!isAmountText(instalment.amount))
        errors.push(LOAN_MESSAGES.ofInstalment(i + 1, LOAN_MESSAGES.amountShape));
      return;
    }
    const amount = parseAmount(instalment.amount, currency);
    if (!amount.ok) errors.push(LOAN_MESSAGES.ofInstalment(i + 1, amount.message));
    else instalments.push({ dueDate, amountMinor: amount.minor });
  });
  if (errors.length === 0) {
    const problem = scheduleProblem(instalments);
    if (problem) errors.push(problem);
  }
  if (errors.length > 0) return { errors };
  return { loan: { loanRef, imei, customerName, currency, instalments } };
}
