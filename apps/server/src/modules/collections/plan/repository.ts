/**
 * The plan's query (docs/features.md § Collections on autopilot): ONE statement, set-based, that the dry run,
 * Today's Plan, the daily run's chunks, the payment watcher and the retry pass all run (`planRows`,
 * `planCounts`): for a lender's day and a policy, each loan's action in each group (a reminder, a lock, an
 * unlock, a release) and why it is skipped.
 *
 * "Days overdue" and "arrears" here read as packages/contract/src/loans.ts defines them for one loan (the
 * oldest unpaid instalment due before the day; the unpaid amount of the instalments due before the day),
 * computed in SQL for a million loans at once; collections-month.test.ts checks the plan against them.
 */
import {
  COLLECTION_RELIEF,
  type CollectionAction,
  type CollectionSkip,
  type CollectionsPolicy,
  currenciesWithDigits,
  PAID_AT_FUTURE_SKEW_MS,
} from '@lendlock/contract';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { CollectionActionState, DB } from '../../../db/types';
import { daysOverdueSql, overdueSinceSql } from '../../loans/repository';

type Db = Kysely<DB> | Transaction<DB>;

/** Which loans a plan covers. */
export type PlanRange =
  /** Every loan (the dry run and Today's Plan; `after` pages on by (loan id, group)). */
  | { kind: 'all'; after?: { loanId: number; ord: number } }
  /** The loans with after < id <= upTo: a chunk of the daily run. */
  | { kind: 'ids'; after: number; upTo: number }
  /** These loans: the payment watcher. */
  | { kind: 'loans'; loanIds: readonly number[] };

export interface PlanParams {
  /** The lender's day, YYYY-MM-DD. */
  date: string;
  /** The engine's clock: "a payment in the last 24 hours" (by when it was paid) is counted back from it. */
  now: Date;
  policy: CollectionsPolicy;
  killSwitch: boolean;
  /** The scope's tenant (the authority module's `scopeFor`): one retailer's devices only, or all (null). */
  retailerPhone: string | null;
  range: PlanRange;
  /** Only these items: one action (not skipped), the skipped ones, or all. */
  filter?: CollectionAction | 'SKIPPED' | 'ALL';
  /**
   * Plan as if nothing were recorded yet that day (the retry pass: does the plan still ask for an action
   * whose command failed?).
   */
  ignoreToday?: boolean;
  limit?: number;
}

export interface PlanRow {
  loan_id: number;
  loan_ref: string;
  imei: string;
  imei1: string | null;
  customer_name: string;
  retailer_phone: string | null;
  currency: string;
  /** 1 reminder, 2 lock, 3 unlock, 4 release (the order of a loan's items). */
  ord: number;
  kind: CollectionAction;
  skipped: CollectionSkip | null;
  done: boolean;
  /** The day's recorded action's state and attempts (done items; 0031). */
  done_state: CollectionActionState | null;
  attempts: number | null;
  due_date: string | null;
  amount_minor: number | null;
  days_overdue: number;
}

/**
 * The loans the plan reads, with what it needs of each (one row per loan), set-based: the open instalments
 * due up to the day of a Pre reminder (`loan_instalments_open_by_loan`, or over all loans
 * `loan_instalments_open_due`) aggregated per loan, and the day's recorded actions per loan, joined by hash
 * to the loans. A loan without an instalment due by then, an action today, a lock on its device or a paid
 * status can have no item: it is left out before the items are built.
 */
function loanFacts(p: PlanParams): RawBuilder<unknown> {
  const { date, policy } = p;
  const pre = policy.reminders.preDaysBefore;
  const rangeOf = (column: RawBuilder<unknown>) =>
    p.range.kind === 'ids'
      ? sql`${column} > ${p.range.after} AND ${column} <= ${p.range.upTo}`
      : p.range.kind === 'loans'
        ? sql`${column} = ANY(${[...p.range.loanIds]}::bigint[])`
        : p.range.after
          ? sql`${column} >= ${p.range.after.loanId}`
          : sql`true`;
  // A paid loan matters only for its release, or the unlock of a device collections locked.
  const paidMatters = policy.release !== 'OFF' || policy.unlockOnPayment;
  const scope = p.retailerPhone === null ? sql`true` : sql`d.retailer_phone = ${p.retailerPhone}`;
  // IN (SELECT unnest(…)): a hashed set, whatever the size of the lists (up to 10,000 each).
  const excluded = sql`(l.imei IN (SELECT unnest(${policy.excludedImeis}::text[]))
      OR d.imei2 IN (SELECT unnest(${policy.excludedImeis}::text[]))
      OR d.retailer_phone IN (SELECT unnest(${policy.excludedRetailers}::text[])))`;
  const locked = sql`coalesce((d.desired_state ->> 'locked')::boolean, false)`;
  return sql`
    SELECT l.id AS loan_id, l.loan_ref, l.imei, d.imei1, l.customer_name, d.retailer_phone,
      l.currency::text AS currency, l.status, l.promise_to_pay_until,
      a.overdue_since, coalesce(a.arrears, 0)::float8 AS arrears, a.due_amount, a.pre_amount,
      ${daysOverdueSql(date, sql`a.overdue_since`)} AS days_overdue,
      (d.imei1 IS NULL OR d.claimstatus <> 'ENROLLED'
        OR coalesce((d.desired_state ->> 'released')::boolean, false)) AS gone,
      ${locked} AS locked,
      d.desired_cause -> 'locked' ->> 'cause' AS lock_cause,
      ((d.desired_cause -> 'locked' ->> 'at')::timestamptz AT TIME ZONE ${policy.timeZone}::text)::date AS lock_decided_on,
      EXISTS (SELECT 1 FROM collection_holds h WHERE h.imei1 = l.imei) AS held,
      coalesce(${excluded}, false) AS excluded,
      t.today
    FROM loans l
    LEFT JOIN (
      SELECT i.loan_id,
        ${overdueSinceSql(date)} AS overdue_since,
        (sum(i.amount_minor - i.paid_minor) FILTER (WHERE i.due_date < ${date}::date))::float8 AS arrears,
        (sum(i.amount_minor - i.paid_minor) FILTER (WHERE i.due_date = ${date}::date))::float8 AS due_amount,
        (sum(i.amount_minor - i.paid_minor)
          FILTER (WHERE ${pre}::int > 0 AND i.due_date = ${date}::date + ${pre}::int))::float8 AS pre_amount
      FROM loan_instalments i
      WHERE ${rangeOf(sql`i.loan_id`)} AND i.paid_minor < i.amount_minor
        AND i.due_date <= ${date}::date + ${pre}::int
      GROUP BY i.loan_id
    ) a ON a.loan_id = l.id
    LEFT JOIN (
      SELECT c.loan_id, jsonb_object_agg(c.grp, jsonb_build_array(c.kind, c.skip_reason, c.state, c.attempts)
          ORDER BY c.trigger_payment_id DESC) AS today
      FROM collection_actions c
      WHERE c.action_date = ${date}::date AND ${rangeOf(sql`c.loan_id`)} AND NOT ${p.ignoreToday === true}::boolean
      GROUP BY c.loan_id
    ) t ON t.loan_id = l.id
    LEFT JOIN devices d ON d.imei1 = l.imei
    WHERE ${rangeOf(sql`l.id`)} AND ${scope} AND (l.status = 'OPEN' OR ${paidMatters}::boolean)
      AND (a.loan_id IS NOT NULL OR t.loan_id IS NOT NULL OR l.status = 'PAID' OR ${locked})`;
}

/**
 * Whether a loan's recent payments suspend its LOCK (docs/features.md § Collections on autopilot), over the
 * loan facts aliased `f` (its `loan_id`, `currency`, `arrears`): the payments paid (`paid_at`, when the
 * customer paid, not when it was recorded) in the 24 hours before the engine's clock — one dated later than
 * the clock (and the skew a payment's date may have) is not yet — and not reversed, summed, reach the
 * policy's minimum: `minAmount` in the loan's currency, or `minSharePercent` of what was overdue before them
 * (the arrears, which they already reduced, plus them); none set: any payment.
 */
function recentPaymentCovers(
  f: RawBuilder<unknown>,
  now: Date,
  lockPause: CollectionsPolicy['lockPause'],
): RawBuilder<boolean> {
  const { minAmount, minSharePercent } = lockPause;
  const digits = sql`CASE WHEN ${f}.currency = ANY(${currenciesWithDigits(0)}::text[]) THEN 0
      WHEN ${f}.currency = ANY(${currenciesWithDigits(3)}::text[]) THEN 3 ELSE 2 END`;
  const minimums: RawBuilder<unknown>[] = [];
  if (minAmount !== null) minimums.push(sql`s.paid >= ${minAmount}::numeric * power(10::numeric, ${digits})`);
  if (minSharePercent !== null)
    minimums.push(sql`s.paid * 100 >= ${minSharePercent}::numeric * (${f}.arrears::numeric + s.paid)`);
  const covers = minimums.length === 0 ? sql`true` : sql.join(minimums, sql` OR `);
  return sql<boolean>`(SELECT s.paid IS NOT NULL AND (${covers}) FROM (
      SELECT sum(pay.amount_minor)::numeric AS paid FROM loan_payments pay
      WHERE pay.loan_id = ${f}.loan_id AND pay.reversed_at IS NULL
        AND pay.paid_at > ${now}::timestamptz - interval '24 hours'
        AND pay.paid_at <= ${now}::timestamptz + ${PAID_AT_FUTURE_SKEW_MS} * interval '1 millisecond') s)`;
}

/** Each loan's items: at most one per group, the day's recorded action first. */
function planItems(p: PlanParams): RawBuilder<unknown> {
  const { date, now, policy } = p;
  const post = policy.reminders.postEveryDays;
  const pre = policy.reminders.preDaysBefore;
  const lockAfter = policy.lockAfterDaysOverdue;
  const release = policy.release;
  // The device's lock is collections' own: collections decided its `locked` key (devices.desired_cause,
  // kept through a re-registration and the reconcile's re-lock); an operator's lock is left alone.
  const lockedByUs = sql`f.lock_cause = 'collections'`;
  // An operator's unlock stands (docs/features.md § Collections on autopilot): no automated lock until
  // an instalment due on or after the day of the unlock is overdue as long as the lock rule asks.
  const operatorUnlock = sql`(NOT f.locked AND f.lock_cause = 'operator' AND NOT EXISTS (
      SELECT 1 FROM loan_instalments i WHERE i.loan_id = f.loan_id AND i.paid_minor < i.amount_minor
        AND i.due_date >= f.lock_decided_on AND ${daysOverdueSql(date, sql`i.due_date`)} >= ${lockAfter}::int))`;
  const releasedBefore = sql`EXISTS (SELECT 1 FROM collection_actions r WHERE r.loan_id = f.loan_id
      AND r.kind = 'RELEASE' AND r.state <> 'SKIPPED' AND r.action_date <> ${date}::date)`;
  const remind = sql`CASE
      WHEN f.status <> 'OPEN' THEN NULL
      WHEN ${post}::int > 0 AND f.days_overdue > 0 AND (f.days_overdue - 1) % greatest(${post}::int, 1) = 0 THEN 'POST'
      WHEN ${policy.reminders.due}::boolean AND f.due_amount IS NOT NULL THEN 'DUE'
      WHEN ${pre}::int > 0 AND f.pre_amount IS NOT NULL THEN 'PRE' END`;
  const lock = sql`CASE WHEN f.status = 'OPEN' AND ${lockAfter}::int IS NOT NULL
      AND f.days_overdue >= ${lockAfter}::int THEN 'LOCK' END`;
  // A paid-up device is unlocked, unless a release (which lifts everything) goes out instead.
  const unlock = sql`CASE WHEN NOT ${policy.unlockOnPayment}::boolean OR NOT f.locked OR f.gone OR f.arrears > 0 THEN NULL
      WHEN f.status = 'PAID' AND ${release}::text = 'AUTO' THEN NULL
      WHEN ${lockedByUs} THEN 'UNLOCK' END`;
  const releaseKind = sql`CASE WHEN f.status = 'PAID' AND ${release}::text <> 'OFF' AND NOT f.gone
      AND NOT ${releasedBefore} THEN 'RELEASE' END`;
  const recentPayment = recentPaymentCovers(sql`f`, now, policy.lockPause);
  const skipped = sql`CASE
      WHEN x.done THEN x.done_skip
      WHEN f.gone THEN 'released'
      WHEN ${p.killSwitch}::boolean AND x.kind <> ALL(${[...COLLECTION_RELIEF]}::text[]) THEN 'killSwitch'
      WHEN NOT ${policy.enabled}::boolean THEN 'disabled'
      WHEN f.held THEN 'held'
      WHEN f.excluded THEN 'excluded'
      WHEN x.kind = 'LOCK' AND ${operatorUnlock} THEN 'operatorUnlock'
      WHEN x.kind = 'LOCK' AND ${recentPayment} THEN 'recentPayment'
      WHEN x.kind = 'LOCK' AND f.promise_to_pay_until >= ${date}::date THEN 'promiseToPay'
      WHEN x.kind = 'LOCK' AND f.locked THEN 'alreadyLocked'
      END`;
  return sql`
    SELECT f.loan_id, f.loan_ref, f.imei, f.imei1, f.customer_name, f.retailer_phone, f.currency,
      x.ord, x.kind, ${skipped} AS skipped, x.done, x.done_state, x.attempts,
      CASE x.kind WHEN 'POST' THEN f.overdue_since WHEN 'LOCK' THEN f.overdue_since
        WHEN 'DUE' THEN ${date}::date WHEN 'PRE' THEN ${date}::date + ${pre}::int END::text AS due_date,
      CASE x.kind WHEN 'POST' THEN (SELECT (o.amount_minor - o.paid_minor)::float8 FROM loan_instalments o
          WHERE o.loan_id = f.loan_id AND o.paid_minor < o.amount_minor AND o.due_date = f.overdue_since
          ORDER BY o.seq LIMIT 1)
        WHEN 'LOCK' THEN f.arrears
        WHEN 'DUE' THEN f.due_amount WHEN 'PRE' THEN f.pre_amount END AS amount_minor,
      f.days_overdue::int AS days_overdue
    FROM (${loanFacts(p)}) f
    CROSS JOIN LATERAL (
      SELECT v.ord, v.grp, coalesce(f.today -> v.grp ->> 0, v.kind) AS kind,
        (f.today -> v.grp) IS NOT NULL AS done, f.today -> v.grp ->> 1 AS done_skip,
        f.today -> v.grp ->> 2 AS done_state, (f.today -> v.grp ->> 3)::int AS attempts
      FROM (VALUES (1, 'REMIND', ${remind}), (2, 'LOCK', ${lock}), (3, 'UNLOCK', ${unlock}),
        (4, 'RELEASE', ${releaseKind})) AS v(ord, grp, kind)
    ) x
    WHERE x.kind IS NOT NULL`;
}

function filterOf(p: PlanParams): RawBuilder<unknown> {
  const filter = p.filter ?? 'ALL';
  if (filter === 'ALL') return sql`true`;
  if (filter === 'SKIPPED') return sql`skipped IS NOT NULL`;
  return sql`kind = ${filter} AND skipped IS NULL`;
}

/**
 * In a transaction, no JIT compilation for the rest of it: the plan's statement is estimated costly over a
 * million loans, and PostgreSQL would compile it (about 0.1 s) for every chunk of a run.
 */
async function noJit(db: Db): Promise<void> {
  if (db.isTransaction) await sql`SET LOCAL jit = off`.execute(db);
}

/** The plan's items in (loan id, group) order: a page (`limit`), or all of them (`limit` unset). */
export async function planRows(db: Db, p: PlanParams): Promise<PlanRow[]> {
  await noJit(db);
  const after = p.range.kind === 'all' ? p.range.after : undefined;
  const page = after ? sql`(loan_id, ord) > (${after.loanId}::bigint, ${after.ord}::int)` : sql`true`;
  const limit = p.limit === undefined ? sql`` : sql`LIMIT ${p.limit}`;
  const result = await sql<PlanRow>`
    SELECT * FROM (${planItems(p)}) items WHERE ${filterOf(p)} AND ${page}
    ORDER BY loan_id, ord ${limit}`.execute(db);
  return result.rows;
}

/** How many items of each action are taken, and how many skipped for each reason. */
export async function planCounts(
  db: Db,
  p: PlanParams,
): Promise<{ kind: CollectionAction; skipped: CollectionSkip | null; n: number }[]> {
  await noJit(db);
  const result = await sql<{ kind: CollectionAction; skipped: CollectionSkip | null; n: number }>`
    SELECT kind, skipped, count(*)::int AS n FROM (${planItems(p)}) items GROUP BY kind, skipped`.execute(db);
  return result.rows.map((r) => ({ ...r, n: Number(r.n) }));
}
