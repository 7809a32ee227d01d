/**
 * The Audit Log search form as pure functions: its values (the screen opens on the last 7 days), `validate()` (the date rule with the contract's
 * message), the filter it sends, the paging of the results and the message a failure shows.
 */
import { addDays, MESSAGES } from '@lendlock/contract';
import { type AuditFilter, filterFields } from '../../api/audit';
import { refusalMessage } from '../../api/client';
import { AUDIT_LOG_LABELS as L } from './labels';

export interface AuditLogFormValues {
  imei: string;
  user: string;
  action: string;
  /** YYYY-MM-DD, as a date input gives it; '' when not chosen. */
  from: string;
  to: string;
}

export const EMPTY_AUDIT_LOG_FORM: AuditLogFormValues = { imei: '', user: '', action: '', from: '', to: '' };

/** The days the screen opens on: the last 7, today included (`today` is the browser's day). */
export const OPENING_DAYS = 7;

/** The form the screen opens with, searched at once: the last OPENING_DAYS days. */
export function openingForm(today: string): AuditLogFormValues {
  return { ...EMPTY_AUDIT_LOG_FORM, from: addDays(today, 1 - OPENING_DAYS), to: today };
}

/** Null when the form may be sent; otherwise the message to show. Every field is optional. */
export function validate(form: AuditLogFormValues): string | null {
  if (form.from && form.to && form.from > form.to) return MESSAGES.endBeforeStart;
  return null;
}

/** What the form asks the server for: its fields trimmed, the empty ones left out. */
export function auditFilter(form: AuditLogFormValues): AuditFilter {
  return filterFields({
    imei: form.imei.trim(),
    user: form.user.trim(),
    action: form.action.trim(),
    from: form.from,
    to: form.to,
  });
}

/** How many pages of `size` rows `total` rows make (at least one). */
export function pageCount(total: number, size: number): number {
  return Math.max(1, Math.ceil(total / size));
}

/** Where page `page` (1-based) starts. */
export function pageOffset(page: number, size: number): number {
  return (Math.max(1, page) - 1) * size;
}

/**
 * 'Rows 501–1,000 of 1,234' for the page at `offset` showing `shown` rows; 'of more than 10,000' when the
 * server capped its count (`capped`: it counts at most that many).
 */
export function rangeText(offset: number, shown: number, total: number, capped = false): string {
  if (shown === 0) return L.rows(total, capped);
  return L.range(offset + 1, offset + shown, total, capped);
}

/** The server's own message when it refused the search, else 'Cannot fetch the data now, please try again'. */
export function failureMessage(error: unknown): string {
  return refusalMessage(error, MESSAGES.cannotFetch);
}
