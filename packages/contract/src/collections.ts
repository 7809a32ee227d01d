/**
 * Pure parts of collections on autopilot (docs/features.md § Collections on autopilot), for the server's
 * engine and the console alike: the lender's clock (day and time in the policy's zone), the quiet hours, the
 * rule text every automated command carries, and what changed between two policy versions.
 */
import type {
  CollectionAction,
  CollectionSkip,
  CollectionsPolicy,
  PlanCounts,
  PlanItem,
  PolicyChange,
} from './api/collections';
import { COLLECTION_SKIPS, PLAN_CSV_HEADERS } from './api/collections';
import { FORMULA_START } from './csv/formula';
import { loadPapa } from './csv/stream';
import { wallClockIn } from './dates';

const DAY_MS = 86_400_000;

/** Minutes after midnight of `HH:MM`. */
export function minutesOf(time: string): number {
  const [h, m] = time.split(':');
  return Number(h) * 60 + Number(m);
}

/** The lender's day (YYYY-MM-DD) and the minutes after its midnight at `now`, in `timeZone`. */
export function lenderClock(timeZone: string, now: Date): { date: string; minutes: number } {
  const wall = wallClockIn(timeZone)(now.getTime());
  const date = new Date(Math.floor(wall / DAY_MS) * DAY_MS).toISOString().slice(0, 10);
  return { date, minutes: Math.floor((((wall % DAY_MS) + DAY_MS) % DAY_MS) / 60_000) };
}

/** Whether `minutes` (after local midnight) fall in the quiet hours; a window may cross midnight. */
export function inQuietHours(quiet: CollectionsPolicy['quietHours'], minutes: number): boolean {
  if (!quiet) return false;
  const start = minutesOf(quiet.start);
  const end = minutesOf(quiet.end);
  return start < end ? minutes >= start && minutes < end : minutes >= start || minutes < end;
}

/** `HH:MM` at which the day's run starts: the end of the quiet hours, or midnight without them. */
export function runStartTime(policy: Pick<CollectionsPolicy, 'quietHours'>): string {
  return policy.quietHours?.end ?? '00:00';
}

/**
 * Whether the daily run may send reminders and locks at `now`: on the lender's day, from the end of the
 * quiet hours, and never inside them.
 */
export function runMaySend(policy: Pick<CollectionsPolicy, 'quietHours' | 'timeZone'>, now: Date): boolean {
  const { minutes } = lenderClock(policy.timeZone, now);
  return minutes >= minutesOf(runStartTime(policy)) && !inQuietHours(policy.quietHours, minutes);
}

/**
 * The rule an automated command carries, shown as its user in reports and the audit report:
 * `collections v3: lock after 5 days overdue`. `version` null: an unsaved policy (a dry run).
 */
export function ruleText(
  version: number | null,
  action: CollectionAction,
  policy: CollectionsPolicy,
): string {
  const days = (n: number | null) => `${n} day${n === 1 ? '' : 's'}`;
  const rule: Record<CollectionAction, string> = {
    PRE: `Pre reminder ${days(policy.reminders.preDaysBefore)} before the due date`,
    DUE: 'Due reminder on the due date',
    POST: `Post reminder every ${days(policy.reminders.postEveryDays)} overdue`,
    LOCK: `lock after ${days(policy.lockAfterDaysOverdue)} overdue`,
    UNLOCK: 'unlock when a payment clears the arrears',
    RELEASE:
      policy.release === 'APPROVAL'
        ? 'release when the last instalment is paid, after approval'
        : 'release when the last instalment is paid',
  };
  return `collections ${version === null ? 'draft' : `v${version}`}: ${rule[action]}`;
}

/** Counts with every action and skip reason at 0. */
export function emptyPlanCounts(): PlanCounts {
  return {
    PRE: 0,
    DUE: 0,
    POST: 0,
    LOCK: 0,
    UNLOCK: 0,
    RELEASE: 0,
    skipped: Object.fromEntries(COLLECTION_SKIPS.map((s) => [s, 0])) as Record<CollectionSkip, number>,
  };
}

/** `a` + `b`, action by action and reason by reason. */
export function addPlanCounts(a: PlanCounts, b: PlanCounts): PlanCounts {
  const sum = emptyPlanCounts();
  for (const key of ['PRE', 'DUE', 'POST', 'LOCK', 'UNLOCK', 'RELEASE'] as const)
    sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  for (const reason of COLLECTION_SKIPS)
    sum.skipped[reason] = (a.skipped?.[reason] ?? 0) + (b.skipped?.[reason] ?? 0);
  return sum;
}

/**
 * The fields a change is named by: `reminders` and `lockPause` field by field, every other field (lists
 * too) whole.
 */
function fieldsOf(policy: CollectionsPolicy | null): Map<string, unknown> {
  const fields = new Map<string, unknown>();
  if (!policy) return fields;
  for (const [key, value] of Object.entries(policy)) {
    if (key === 'reminders' || key === 'lockPause')
      for (const [inner, v] of Object.entries(value as object)) fields.set(`${key}.${inner}`, v);
    else fields.set(key, value);
  }
  return fields;
}

/**
 * The fields that differ between two policies, in field order: `reminders.preDaysBefore`, …,
 * `lockPause.minAmount`, `lockPause.minSharePercent`, and the other fields whole (`quietHours`,
 * `excludedImeis`). The version history and the console's save confirmation both name changes with it.
 * `before` null: every field of the first version.
 */
export function policyChanges(before: CollectionsPolicy | null, after: CollectionsPolicy): PolicyChange[] {
  const a = fieldsOf(before);
  const b = fieldsOf(after);
  const changes: PolicyChange[] = [];
  for (const field of new Set([...b.keys(), ...a.keys()])) {
    const from = a.has(field) ? a.get(field) : null;
    const to = b.has(field) ? b.get(field) : null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes.push({ field, from, to });
  }
  return changes;
}

/** The cells of a plan item in the plan's CSV (PLAN_CSV_HEADERS). */
export function planCsvCells(item: PlanItem): string[] {
  return [
    item.imei,
    item.loanRef,
    item.customerName,
    item.retailerPhone ?? '',
    item.action,
    item.skipped ?? '',
    item.rule,
    item.dueDate ?? '',
    item.amount ?? '',
    item.currency,
    String(item.daysOverdue),
  ];
}

/**
 * Plan items as CSV text (CRLF between rows, fields quoted where CSV needs it, formula cells neutralised),
 * with the header line first when `header`; no line break at the end, so pages join with CRLF. The byte
 * order mark is the caller's (`withBom`, or the server's stream).
 */
export async function planCsvText(items: readonly PlanItem[], options: { header: boolean }): Promise<string> {
  const Papa = await loadPapa();
  const data = items.map(planCsvCells);
  const config = { escapeFormulae: FORMULA_START, newline: '\r\n' };
  if (!options.header) return data.length === 0 ? '' : Papa.unparse(data, config);
  // Papa ends a header with no rows with a line break: pages join with their own.
  return Papa.unparse({ fields: [...PLAN_CSV_HEADERS], data }, config).replace(/\r\n$/, '');
}
