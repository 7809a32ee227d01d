/**
 * Payment-reminder texts: a pre-due reminder, a due-date alert and a past-due alert, generated
 * from name, amount and date. Templates Pre, Due, Post have the codes 1, 2, 3.
 */
import { displayAmount, parseAmount } from './loans';

export const NOTIFY_TEMPLATES = [
  { code: 1, template: 'Pre', label: 'Pre Due' },
  { code: 2, template: 'Due', label: 'Due Date' },
  { code: 3, template: 'Post', label: 'Post Due Date' },
] as const;
export type NotifyTemplate = (typeof NOTIFY_TEMPLATES)[number]['template'];

export interface NotifyFields {
  name: string;
  /** Amount with up to 2 decimals, e.g. "1499" or "1499.50" (the currency's decimals with `currency`). */
  amount: string;
  /** DD/MM/YYYY */
  date: string;
  /**
   * The loan's ISO 4217 currency (collections reminders). Absent or INR: rupees, as the spec writes them
   * (₹1,499.50); another: its code and the amount with thousands separated (USD 1,499.50).
   */
  currency?: string | undefined;
}

/** Created once: `toLocaleString` builds a new formatter per call (about 0.2 ms, the bulk of a big file). */
let indianFormat: Intl.NumberFormat | null = null;

/**
 * The integer and fraction digits of an amount as validated (digits, then up to 2 decimals), leading
 * zeros dropped, with at most 13 integer digits (exact in a double, so `Intl` would write the same), or
 * null. Read character by character: a Notify file formats one amount per row.
 */
function plainAmount(amount: string): [string, string] | null {
  const length = amount.length;
  let dot = -1;
  let start = -1;
  for (let i = 0; i < length; i++) {
    const c = amount.charCodeAt(i);
    if (c === 46 && dot < 0 && i > 0) dot = i;
    else if (c < 48 || c > 57) return null;
    else if (start < 0 && dot < 0 && (c !== 48 || i === length - 1 || amount.charCodeAt(i + 1) === 46))
      start = i;
  }
  const end = dot < 0 ? length : dot;
  if (start < 0 || end - start > 13) return null;
  const fraction = dot < 0 ? '' : amount.slice(dot + 1);
  if (dot >= 0 && (fraction.length < 1 || fraction.length > 2)) return null;
  return [amount.slice(start, end), fraction];
}

/**
 * Indian digit grouping of a run of digits without leading zeros: the last three, then pairs
 * (12,34,567), as `en-IN` writes it.
 */
function groupIndian(digits: string): string {
  if (digits.length <= 3) return digits;
  let head = digits.slice(0, -3);
  let out = digits.slice(-3);
  while (head.length > 2) {
    out = `${head.slice(-2)},${out}`;
    head = head.slice(0, -2);
  }
  return `${head},${out}`;
}

/**
 * Formats an amount to 2 decimals with the rupee sign: ₹1,499.50 (en-IN grouping: ₹12,34,567.00). An
 * amount as the forms and files take it is written directly (a Notify file formats one per row); any
 * other text goes through `Intl.NumberFormat`, which writes the same for the amounts both can.
 */
export function rupees(amount: string): string {
  const plain = plainAmount(amount);
  if (plain) {
    const [integer, fraction] = plain;
    return `₹${groupIndian(integer)}.${fraction.length === 2 ? fraction : fraction.length === 1 ? `${fraction}0` : '00'}`;
  }
  const value = Number(amount);
  indianFormat ??= new Intl.NumberFormat('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 });
  return `₹${indianFormat.format(Number.isFinite(value) ? value : 0)}`;
}

/** The amount as a reminder writes it (NotifyFields.currency). */
function reminderAmount(amount: string, currency: string | undefined): string {
  if (currency === undefined || currency === 'INR') return rupees(amount);
  const parsed = parseAmount(amount, currency);
  return parsed.ok ? displayAmount(parsed.minor, currency) : `${currency} ${amount}`;
}

export function notifyMessage(
  template: NotifyTemplate,
  fields: NotifyFields,
): { header: string; message: string } {
  const name = fields.name.trim();
  const amount = reminderAmount(fields.amount, fields.currency);
  switch (template) {
    case 'Pre':
      return {
        header: 'Payment Reminder',
        message: `Dear ${name}, your EMI of ${amount} is due on ${fields.date}. Please pay on time to keep using your phone without interruption.`,
      };
    case 'Due':
      return {
        header: 'Payment Due Today',
        message: `Dear ${name}, your EMI of ${amount} is due today. Please pay today to avoid any restriction on your phone.`,
      };
    case 'Post':
      return {
        header: 'Payment Overdue',
        message: `Dear ${name}, your EMI of ${amount} was due on ${fields.date} and is still unpaid. Please pay immediately to avoid your phone being locked.`,
      };
  }
}
