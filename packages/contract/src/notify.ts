/**
 * Payment-reminder texts (spec §9): a pre-due reminder, a due-date alert and a past-due alert, generated
 * from name, amount and date. Templates Pre, Due, Post have the codes 1, 2, 3.
 */
export const NOTIFY_TEMPLATES = [
  { code: 1, template: 'Pre', label: 'Pre Due' },
  { code: 2, template: 'Due', label: 'Due Date' },
  { code: 3, template: 'Post', label: 'Post Due Date' },
] as const;
export type NotifyTemplate = (typeof NOTIFY_TEMPLATES)[number]['template'];

export interface NotifyFields {
  name: string;
  /** Amount with up to 2 decimals, e.g. "1499" or "1499.50". */
  amount: string;
  /** DD/MM/YYYY */
  date: string;
}

/** Formats an amount to 2 decimals with the rupee sign: ₹1,499.50 */
export function rupees(amount: string): string {
  const value = Number(amount);
  return `₹${(Number.isFinite(value) ? value : 0).toLocaleString('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
}

export function notifyMessage(
  template: NotifyTemplate,
  fields: NotifyFields,
): { header: string; message: string } {
  const name = fields.name.trim();
  const amount = rupees(fields.amount);
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
