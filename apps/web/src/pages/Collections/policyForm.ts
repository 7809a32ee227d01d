/**
 * The pure side of the policy editor: the form's values from a policy, `validate()` (the contract's
 * `collectionsPolicySchema` is the one rule; this maps its problems onto the form's fields), and how a
 * change (the contract's `policyChanges`, as the version history records it) reads.
 */
import {
  type CollectionsPolicy,
  collectionsPolicySchema,
  lockPauseSchema,
  type PolicyChange,
} from '@lendlock/contract';
import { COLLECTIONS_LABELS as L } from './labels';

export type ReleaseMode = CollectionsPolicy['release'];

/** The editor's fields: numbers and lists as typed, switches for the optional parts. */
export interface PolicyFormValues {
  enabled: boolean;
  timeZone: string;
  preDaysBefore: string;
  due: boolean;
  postEveryDays: string;
  lockEnabled: boolean;
  lockAfterDaysOverdue: string;
  /** What a recent payment must cover to suspend a lock: an amount, a percentage (empty: none). */
  pauseMinAmount: string;
  pauseMinShare: string;
  unlockOnPayment: boolean;
  release: ReleaseMode;
  quietEnabled: boolean;
  quietStart: string;
  quietEnd: string;
  /** One entry per line (commas and spaces separate too). */
  excludedImeis: string;
  excludedRetailers: string;
}

export type PolicyField = keyof PolicyFormValues;
export type PolicyErrors = Partial<Record<PolicyField, string>>;

export function formFromPolicy(policy: CollectionsPolicy): PolicyFormValues {
  return {
    enabled: policy.enabled,
    timeZone: policy.timeZone,
    preDaysBefore: String(policy.reminders.preDaysBefore),
    due: policy.reminders.due,
    postEveryDays: String(policy.reminders.postEveryDays),
    lockEnabled: policy.lockAfterDaysOverdue !== null,
    // A lock switched off keeps a sensible number ready for when it is switched on again.
    lockAfterDaysOverdue: String(policy.lockAfterDaysOverdue ?? 5),
    pauseMinAmount: policy.lockPause.minAmount ?? '',
    pauseMinShare: policy.lockPause.minSharePercent === null ? '' : String(policy.lockPause.minSharePercent),
    unlockOnPayment: policy.unlockOnPayment,
    release: policy.release,
    quietEnabled: policy.quietHours !== null,
    quietStart: policy.quietHours?.start ?? '21:00',
    quietEnd: policy.quietHours?.end ?? '09:00',
    excludedImeis: policy.excludedImeis.join('\n'),
    excludedRetailers: policy.excludedRetailers.join('\n'),
  };
}

/** The entries of a list field, in order, each once. */
export function listEntries(text: string): string[] {
  return [...new Set(text.split(/[\s,;]+/).filter((entry) => entry !== ''))];
}

const policyShape = collectionsPolicySchema.shape;
const reminderShape = policyShape.reminders.shape;
const NUMBER_RULES = {
  preDaysBefore: reminderShape.preDaysBefore,
  postEveryDays: reminderShape.postEveryDays,
  lockAfterDaysOverdue: policyShape.lockAfterDaysOverdue.unwrap(),
  pauseMinShare: lockPauseSchema.shape.minSharePercent.unwrap(),
} as const;
type NumberField = keyof typeof NUMBER_RULES;

/** A whole number typed in a number field, or null when it is not one (empty, decimal, sign, letters). */
function wholeNumber(text: string): number | null {
  const trimmed = text.trim();
  return /^\d{1,6}$/.test(trimmed) ? Number(trimmed) : null;
}

/** Which form field a problem of the contract's schema at `path` belongs to. */
function fieldOf(path: readonly PropertyKey[]): PolicyField {
  const [head, second] = path;
  if (head === 'reminders') return second === 'due' ? 'due' : (second as 'preDaysBefore' | 'postEveryDays');
  if (head === 'quietHours') return second === 'end' ? 'quietEnd' : 'quietStart';
  if (head === 'lockPause') return second === 'minAmount' ? 'pauseMinAmount' : 'pauseMinShare';
  if (head === 'excludedImeis' || head === 'excludedRetailers' || head === 'lockAfterDaysOverdue')
    return head;
  if (head === 'timeZone' || head === 'release' || head === 'enabled' || head === 'unlockOnPayment')
    return head;
  return 'enabled';
}

export type Validation = { ok: true; policy: CollectionsPolicy } | { ok: false; errors: PolicyErrors };

/**
 * The policy the form describes, or each field's problem. The numbers' ranges and every other rule are
 * the contract schema's (what the server checks), so the form and the server never disagree.
 */
export function validate(values: PolicyFormValues): Validation {
  const errors: PolicyErrors = {};
  const numbers: Partial<Record<NumberField, number>> = {};
  for (const field of Object.keys(NUMBER_RULES) as NumberField[]) {
    const rule = NUMBER_RULES[field];
    const value = wholeNumber(values[field]);
    // A lock switched off needs no days; an empty minimum share is none.
    const skip =
      (field === 'lockAfterDaysOverdue' && !values.lockEnabled) ||
      (field === 'pauseMinShare' && values[field].trim() === '');
    if (skip) continue;
    if (value === null || !rule.safeParse(value).success) {
      errors[field] = L.wholeNumber(rule.minValue ?? 0, rule.maxValue ?? 0);
    } else {
      numbers[field] = value;
    }
  }
  const candidate = {
    enabled: values.enabled,
    timeZone: values.timeZone.trim(),
    reminders: {
      preDaysBefore: numbers.preDaysBefore ?? 0,
      due: values.due,
      postEveryDays: numbers.postEveryDays ?? 0,
    },
    lockAfterDaysOverdue: values.lockEnabled ? (numbers.lockAfterDaysOverdue ?? 1) : null,
    lockPause: {
      minAmount: values.pauseMinAmount.trim() === '' ? null : values.pauseMinAmount.trim(),
      minSharePercent: numbers.pauseMinShare ?? null,
    },
    unlockOnPayment: values.unlockOnPayment,
    release: values.release,
    quietHours: values.quietEnabled ? { start: values.quietStart.trim(), end: values.quietEnd.trim() } : null,
    excludedImeis: listEntries(values.excludedImeis),
    excludedRetailers: listEntries(values.excludedRetailers),
  };
  const parsed = collectionsPolicySchema.safeParse(candidate);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = fieldOf(issue.path);
      if (errors[field]) continue;
      const [head, index] = issue.path;
      const list = head === 'excludedImeis' || head === 'excludedRetailers' ? candidate[head] : null;
      errors[field] =
        list && typeof index === 'number' && list[index] !== undefined
          ? L.entryProblem(issue.message, list[index])
          : issue.message;
    }
  }
  if (Object.keys(errors).length > 0 || !parsed.success) return { ok: false, errors };
  return { ok: true, policy: parsed.data };
}

const FIELD_NAMES: Record<string, string> = {
  enabled: 'Policy',
  timeZone: 'Time zone',
  reminders: 'Reminders',
  'reminders.preDaysBefore': 'Pre reminder (days before)',
  'reminders.due': 'Due reminder',
  'reminders.postEveryDays': 'Post reminder (every N days)',
  lockAfterDaysOverdue: 'Lock after days overdue',
  'lockPause.minAmount': 'Minimum payment to put a lock off',
  'lockPause.minSharePercent': 'Minimum share of the arrears to put a lock off',
  unlockOnPayment: 'Unlock on payment',
  release: 'Release at the last instalment',
  quietHours: 'Quiet hours',
  'quietHours.start': 'Quiet from',
  'quietHours.end': 'Quiet until',
  excludedImeis: 'Excluded IMEIs',
  excludedRetailers: 'Excluded retailers',
};

/** How a policy value reads in a change: on/off, 'never', 'none', HH:MM–HH:MM, a list's entries. */
export function valueText(field: string, value: unknown): string {
  if (value === null || value === undefined) {
    if (field === 'lockAfterDaysOverdue') return 'never';
    return 'none';
  }
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  if (field === 'release' && typeof value === 'string' && value in L.releaseOptions) {
    return L.releaseOptions[value as ReleaseMode].toLowerCase();
  }
  if ((field === 'reminders.preDaysBefore' || field === 'reminders.postEveryDays') && value === 0)
    return 'none';
  if (field === 'lockPause.minSharePercent') return `${value}%`;
  if (Array.isArray(value)) {
    if (value.length === 0) return 'none';
    const shown = value.slice(0, 5).join(', ');
    return value.length > 5 ? `${shown} and ${value.length - 5} more` : shown;
  }
  if (typeof value === 'object') {
    const { start, end } = value as { start?: unknown; end?: unknown };
    if (typeof start === 'string' && typeof end === 'string') return `${start}–${end}`;
    return JSON.stringify(value);
  }
  return String(value);
}

/** A field as the first version set it: "Lock after days overdue: 5". */
export function settingText(change: PolicyChange): string {
  return `${FIELD_NAMES[change.field] ?? change.field}: ${valueText(change.field, change.to)}`;
}

/** "Lock after days overdue: 5 → 7"; a list says what was added and removed. */
export function changeText(change: PolicyChange): string {
  const name = FIELD_NAMES[change.field] ?? change.field;
  if (Array.isArray(change.from) && Array.isArray(change.to)) {
    const before = new Set(change.from.map(String));
    const after = new Set(change.to.map(String));
    const added = [...after].filter((entry) => !before.has(entry));
    const removed = [...before].filter((entry) => !after.has(entry));
    const parts = [
      added.length > 0 ? `added ${valueText(change.field, added)}` : null,
      removed.length > 0 ? `removed ${valueText(change.field, removed)}` : null,
    ].filter((part) => part !== null);
    return `${name}: ${parts.length > 0 ? parts.join('; ') : 'reordered'}`;
  }
  return `${name}: ${valueText(change.field, change.from)} → ${valueText(change.field, change.to)}`;
}

/** The IANA zones the browser knows, for the time zone picker (the current one first if unknown). */
export function timeZoneOptions(current: string): string[] {
  const known = typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : [];
  return known.includes(current) || current === '' ? [...known] : [current, ...known];
}
