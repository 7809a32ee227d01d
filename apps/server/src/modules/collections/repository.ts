/**
 * The collections engine's queries (README § Collections on autopilot). The plan (`planRows`, `planCounts`)
 * is ONE statement, set-based, that the dry run, Today's Plan, the daily run's chunks and the payment
 * watcher all run: for a lender's day and a policy, each loan's action in each group (a reminder, a lock,
 * an unlock, a release) and why it is skipped.
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
  type ReleaseState,
} from '@lendlock/contract';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { TenantScope } from '../../authz/tenancy';
import type { CollectionActionState, CollectionRunState, DB } from '../../db/types';
import { daysOverdueSql, overdueSinceSql } from '../loans/repository';

type Db = Kysely<DB> | Transaction<DB>;

// ---- The plan ----

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
 * Whether a loan's recent payments suspend its LOCK (README § Collections on autopilot), over the loan
 * facts aliased `f` (its `loan_id`, `currency`, `arrears`): the payments paid (`paid_at`, when the customer
 * paid, not when it was recorded) in the 24 hours before the engine's clock — one dated later than the
 * clock (and the skew a payment's date may have) is not yet — and not reversed, summed, reach the policy's
 * minimum: `minAmount` in the loan's currency, or `minSharePercent` of what was overdue before them (the
 * arrears, which they already reduced, plus them); none set: any payment.
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
  // An operator's unlock stands (README § Collections on autopilot): no automated lock until an instalment
  // due on or after the day of the unlock is overdue as long as the lock rule asks.
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

/**
 * Locks the open instalments overdue by `lockAfter` days or more of the chunk's loans (FOR SHARE): a
 * payment's allocation (which updates the oldest of them first) waits for the chunk to commit, and the
 * chunk's plan, read after this, sees every payment committed before. So no LOCK is recorded beside a
 * payment the plan did not see.
 */
export async function holdOverdueInstalments(
  trx: Transaction<DB>,
  after: number,
  upTo: number,
  date: string,
  lockAfter: number,
): Promise<void> {
  await sql`SELECT 1 FROM loan_instalments
    WHERE loan_id > ${after} AND loan_id <= ${upTo} AND paid_minor < amount_minor
      AND due_date <= ${date}::date - ${lockAfter}::int
    FOR SHARE`.execute(trx);
}

/**
 * The next chunk of a run: the id of the `size`-th loan after `after` (or of the last one) and how many
 * loans that is; null when none is left.
 */
export async function chunkUpperBound(
  db: Db,
  after: number,
  size: number,
): Promise<{ upTo: number; loans: number } | null> {
  const result = await sql<{ id: number | null; n: number }>`
    SELECT max(id)::bigint AS id, count(*)::int AS n
    FROM (SELECT id FROM loans WHERE id > ${after} ORDER BY id LIMIT ${size}) s`.execute(db);
  const row = result.rows[0];
  return !row || row.id === null ? null : { upTo: Number(row.id), loans: Number(row.n) };
}

// ---- Actions ----

export interface ActionValues {
  run_id: number | null;
  loan_id: number;
  imei1: string;
  kind: CollectionAction;
  action_date: string;
  trigger_payment_id: number;
  version: number;
  rule: string;
  state: CollectionActionState;
  skip_reason: CollectionSkip | null;
  due_date: string | null;
  amount_minor: number | null;
}

export interface InsertedAction {
  id: number;
  loan_id: number;
  imei1: string;
  kind: CollectionAction;
  state: CollectionActionState;
  skip_reason: CollectionSkip | null;
}

/**
 * Records actions; one already recorded for its device, day, group and trigger (a run resumed after a
 * crash, another instance's watcher) is left alone and not returned: only the new ones get a command.
 */
export async function insertActions(
  trx: Transaction<DB>,
  rows: readonly ActionValues[],
): Promise<InsertedAction[]> {
  if (rows.length === 0) return [];
  const col = <T>(pick: (r: ActionValues) => T) => rows.map(pick);
  const result = await sql<InsertedAction>`
    INSERT INTO collection_actions (run_id, loan_id, imei1, kind, action_date, trigger_payment_id, version,
      rule, state, skip_reason, due_date, amount_minor)
    SELECT * FROM unnest(${col((r) => r.run_id)}::bigint[], ${col((r) => r.loan_id)}::bigint[],
      ${col((r) => r.imei1)}::text[], ${col((r) => r.kind)}::text[], ${col((r) => r.action_date)}::date[],
      ${col((r) => r.trigger_payment_id)}::bigint[], ${col((r) => r.version)}::int[], ${col((r) => r.rule)}::text[],
      ${col((r) => r.state)}::text[], ${col((r) => r.skip_reason)}::text[], ${col((r) => r.due_date)}::date[],
      ${col((r) => r.amount_minor)}::bigint[])
    ON CONFLICT DO NOTHING
    RETURNING id, loan_id, imei1, kind, state, skip_reason`.execute(trx);
  return result.rows;
}

/** The commands recorded for actions (or the pipeline's refusal, in `note`). */
export async function setActionCommands(
  trx: Transaction<DB>,
  rows: readonly {
    id: number;
    state: CollectionActionState;
    note: string | null;
    commandId: number | null;
    transactionId: string | null;
  }[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`UPDATE collection_actions a SET state = v.state, note = v.note, command_id = v.command_id,
      transaction_id = v.transaction_id
    FROM unnest(${rows.map((r) => r.id)}::bigint[], ${rows.map((r) => r.state)}::text[],
      ${rows.map((r) => r.note)}::text[], ${rows.map((r) => r.commandId)}::bigint[],
      ${rows.map((r) => r.transactionId)}::text[]) AS v(id, state, note, command_id, transaction_id)
    WHERE a.id = v.id`.execute(trx);
}

// ---- Failed automated actions: the retry pass, Device Details ----

/** A device action (LOCK, UNLOCK, RELEASE) not settled yet, with its latest command. */
export interface UnsettledAction {
  id: number;
  loan_id: number;
  loan_ref: string;
  imei1: string;
  kind: CollectionAction;
  action_date: string;
  state: 'ISSUED' | 'RETRYING';
  attempts: number;
  retry_at: Date | null;
  rule: string;
  transaction_id: string | null;
  command_status: string;
  command_result: string | null;
}

/**
 * The device actions of the lender's day (and the day before, to give them up) that the retry pass has to
 * look at, after `after` by id: an ISSUED one whose command FAILED, and a RETRYING one unless it waits for
 * its next attempt (`retry_at` after `now`, the engine's clock). Locked for the caller's transaction; those
 * another instance's pass holds are skipped.
 */
export async function unsettledActions(
  trx: Transaction<DB>,
  page: { date: string; now: Date; after: number; limit: number },
): Promise<UnsettledAction[]> {
  const { date, now, after, limit } = page;
  const result = await sql<UnsettledAction>`
    SELECT a.id, a.loan_id, l.loan_ref, a.imei1, a.kind, a.action_date::text AS action_date, a.state,
      a.attempts, a.retry_at, a.rule, a.transaction_id, c.status AS command_status, c.result AS command_result
    FROM collection_actions a
    JOIN commands c ON c.id = a.command_id
    JOIN loans l ON l.id = a.loan_id
    WHERE a.action_date >= ${date}::date - 1 AND a.kind IN ('LOCK', 'UNLOCK', 'RELEASE')
      AND a.state IN ('ISSUED', 'RETRYING') AND a.id > ${after}
      AND (CASE WHEN a.state = 'ISSUED' THEN c.status = 'FAILED'
        ELSE a.retry_at IS NULL OR a.retry_at <= ${now}::timestamptz OR a.action_date < ${date}::date END)
    ORDER BY a.id
    LIMIT ${limit}
    FOR UPDATE OF a SKIP LOCKED`.execute(trx);
  return result.rows.map((r) => ({ ...r, id: Number(r.id), loan_id: Number(r.loan_id) }));
}

/** An action's new state after the retry pass looked at it (only the fields given change). */
export async function updateAction(
  trx: Transaction<DB>,
  id: number,
  values: {
    state?: CollectionActionState;
    attempts?: number;
    retryAt?: Date | null;
    note?: string | null;
    commandId?: number;
    transactionId?: string;
  },
): Promise<void> {
  await trx
    .updateTable('collection_actions')
    .set({
      ...(values.state !== undefined ? { state: values.state } : {}),
      ...(values.attempts !== undefined ? { attempts: values.attempts } : {}),
      ...(values.retryAt !== undefined ? { retry_at: values.retryAt } : {}),
      ...(values.note !== undefined ? { note: values.note } : {}),
      ...(values.commandId !== undefined ? { command_id: values.commandId } : {}),
      ...(values.transactionId !== undefined ? { transaction_id: values.transactionId } : {}),
    })
    .where('id', '=', id)
    .execute();
}

export interface FailedActionRow {
  id: number;
  imei1: string;
  loan_ref: string;
  kind: CollectionAction;
  rule: string;
  action_date: string;
  state: 'RETRYING' | 'FAILED';
  attempts: number;
  retry_at: Date | null;
  note: string | null;
  command_result: string | null;
  transaction_id: string | null;
}

/** A device's actions retrying or given up, newest first. */
export async function deviceFailures(db: Db, imei1: string, limit: number): Promise<FailedActionRow[]> {
  const result = await sql<FailedActionRow>`
    SELECT a.id, a.imei1, l.loan_ref, a.kind, a.rule, a.action_date::text AS action_date, a.state,
      a.attempts, a.retry_at, a.note, c.result AS command_result, a.transaction_id
    FROM collection_actions a
    JOIN loans l ON l.id = a.loan_id
    LEFT JOIN commands c ON c.id = a.command_id
    WHERE a.imei1 = ${imei1} AND a.state IN ('RETRYING', 'FAILED')
    ORDER BY a.id DESC
    LIMIT ${limit}`.execute(db);
  return result.rows.map((r) => ({ ...r, id: Number(r.id) }));
}

// ---- Policy versions ----

export interface PolicyVersionRow {
  version: number;
  policy: unknown;
  created_by: string;
  created_at: Date;
}

export async function currentPolicy(db: Db): Promise<PolicyVersionRow | undefined> {
  return db
    .selectFrom('collection_policies')
    .select(['version', 'policy', 'created_by', 'created_at'])
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function policyVersions(db: Db, limit: number): Promise<PolicyVersionRow[]> {
  return db
    .selectFrom('collection_policies')
    .select(['version', 'policy', 'created_by', 'created_at'])
    .orderBy('version', 'desc')
    .limit(limit)
    .execute();
}

export async function insertPolicy(
  trx: Transaction<DB>,
  row: { version: number; policy: CollectionsPolicy; createdBy: string; userId: number | null },
): Promise<PolicyVersionRow> {
  return trx
    .insertInto('collection_policies')
    .values({
      version: row.version,
      policy: JSON.stringify(row.policy),
      created_by: row.createdBy,
      created_by_user_id: row.userId,
    })
    .returning(['version', 'policy', 'created_by', 'created_at'])
    .executeTakeFirstOrThrow();
}

// ---- Control: the kill switch; the payment watcher's cursor ----

export interface ControlRow {
  kill_switch: boolean;
  kill_reason: string | null;
  kill_changed_by: string | null;
  kill_changed_at: Date | null;
}

/** The control row; `lock`: FOR UPDATE (policy saves and the kill switch), `share`: FOR SHARE (a chunk). */
export async function readControl(db: Db, lock: 'update' | 'share' | null = null): Promise<ControlRow> {
  const query = db
    .selectFrom('collection_control')
    .select(['kill_switch', 'kill_reason', 'kill_changed_by', 'kill_changed_at']);
  const locked = lock === 'update' ? query.forUpdate() : lock === 'share' ? query.forShare() : query;
  return locked.executeTakeFirstOrThrow();
}

export async function setKillSwitch(
  trx: Transaction<DB>,
  values: { on: boolean; reason: string; changedBy: string },
): Promise<ControlRow> {
  return trx
    .updateTable('collection_control')
    .set({
      kill_switch: values.on,
      kill_reason: values.reason,
      kill_changed_by: values.changedBy,
      kill_changed_at: sql<Date>`now()`,
    })
    .returning(['kill_switch', 'kill_reason', 'kill_changed_by', 'kill_changed_at'])
    .executeTakeFirstOrThrow();
}

/**
 * The payment watcher's cursor, locked for the caller's transaction; undefined when another instance's
 * watcher holds it (SKIP LOCKED: that pass does the work, this one skips, nothing waits).
 */
export async function takePaymentCursor(trx: Transaction<DB>): Promise<number | undefined> {
  const row = await trx
    .selectFrom('collection_payment_watch')
    .select('payment_cursor')
    .forUpdate()
    .skipLocked()
    .executeTakeFirst();
  return row ? Number(row.payment_cursor) : undefined;
}

/** Moves the payment cursor forward (never back), in the transaction that took it. */
export async function advancePaymentCursor(trx: Transaction<DB>, to: number): Promise<void> {
  await trx
    .updateTable('collection_payment_watch')
    .set({ payment_cursor: sql<number>`greatest(payment_cursor, ${to})` })
    .execute();
}

/**
 * Payments to look at: those after the cursor, and those received in the last minute whatever their id
 * (a payment whose transaction commits after a later one's has a smaller id than the cursor already
 * passed). Looking at one twice does nothing: actions are unique per payment.
 */
export async function paymentsToWatch(
  db: Db,
  cursor: number,
  limit: number,
): Promise<{ id: number; loan_id: number }[]> {
  const result = await sql<{ id: number; loan_id: number }>`
    (SELECT id, loan_id FROM loan_payments WHERE id > ${cursor} ORDER BY id LIMIT ${limit})
    UNION
    (SELECT id, loan_id FROM loan_payments WHERE received_at > now() - interval '1 minute' AND id <= ${cursor})
    ORDER BY id`.execute(db);
  return result.rows.map((r) => ({ id: Number(r.id), loan_id: Number(r.loan_id) }));
}

// ---- Automated commands still QUEUED (the kill switch cancels the harmful ones) ----

export interface CancelledCommand {
  transaction_id: string;
  imei1: string;
  command: string;
  status: 'CANCELLED';
  interface: 'C';
  batch_id: number | null;
  result: string;
}

export async function cancelQueuedCollections(
  trx: Transaction<DB>,
  result: string,
): Promise<CancelledCommand[]> {
  const rows = await sql<CancelledCommand>`
    UPDATE commands SET status = 'CANCELLED', result = ${result}, completed_at = now()
    WHERE interface = 'C' AND status = 'QUEUED' AND command <> ALL(${[...COLLECTION_RELIEF]}::text[])
    RETURNING transaction_id, imei1, command, status, interface, batch_id, result`.execute(trx);
  return rows.rows;
}

// ---- Holds ----

export interface HoldRow {
  imei1: string;
  reason: string;
  held_by: string;
  held_at: Date;
  retailer_phone: string | null;
}

/** The holds of the scope's devices (the authority module's `scopeFor(…, 'collections')`). */
export async function listHolds(db: Db, { retailerPhone }: TenantScope): Promise<HoldRow[]> {
  let query = db
    .selectFrom('collection_holds as h')
    .leftJoin('devices as d', 'd.imei1', 'h.imei1')
    .select(['h.imei1', 'h.reason', 'h.held_by', 'h.held_at', 'd.retailer_phone'])
    .orderBy('h.held_at', 'desc')
    .limit(10_000);
  if (retailerPhone !== null) query = query.where('d.retailer_phone', '=', retailerPhone);
  return query.execute();
}

export async function upsertHold(
  trx: Transaction<DB>,
  values: { imei1: string; reason: string; heldBy: string; userId: number | null },
): Promise<Omit<HoldRow, 'retailer_phone'>> {
  return trx
    .insertInto('collection_holds')
    .values({
      imei1: values.imei1,
      reason: values.reason,
      held_by: values.heldBy,
      held_by_user_id: values.userId,
    })
    .onConflict((oc) =>
      oc.column('imei1').doUpdateSet({
        reason: values.reason,
        held_by: values.heldBy,
        held_by_user_id: values.userId,
        held_at: sql<Date>`now()`,
      }),
    )
    .returning(['imei1', 'reason', 'held_by', 'held_at'])
    .executeTakeFirstOrThrow();
}

export async function deleteHold(trx: Transaction<DB>, imei1: string): Promise<HoldRow | undefined> {
  const row = await trx
    .deleteFrom('collection_holds')
    .where('imei1', '=', imei1)
    .returning(['imei1', 'reason', 'held_by', 'held_at'])
    .executeTakeFirst();
  return row ? { ...row, retailer_phone: null } : undefined;
}

// ---- Release approvals ----

/**
 * A release action's state as the API names it (contract `RELEASE_STATES`), from its row: the ONE mapping,
 * read by the lists' filter and by every view. Approved: issued (or retried, or failed on the device)
 * after an operator's decision; refused: approved, but the pipeline refused the command. An automatic
 * release (no decision) is none of these: NULL, never listed.
 */
const releaseStateSql = sql<ReleaseState | null>`CASE
    WHEN a.state = 'AWAITING_APPROVAL' THEN 'AWAITING_APPROVAL'
    WHEN a.state = 'REJECTED' THEN 'REJECTED'
    WHEN a.decided_by IS NULL THEN NULL
    WHEN a.state = 'REFUSED' THEN 'REFUSED'
    WHEN a.state IN ('ISSUED', 'RETRYING', 'FAILED') THEN 'APPROVED' END`;

export interface ReleaseRow {
  id: number;
  loan_id: number;
  loan_ref: string;
  imei1: string;
  customer_name: string;
  retailer_phone: string | null;
  paid_at: Date | null;
  created_at: Date;
  /** The row's own state (collection_actions.state). */
  state: CollectionActionState;
  /** The state the API shows (`releaseStateSql`). */
  release_state: ReleaseState | null;
  decided_by: string | null;
  decided_at: Date | null;
  transaction_id: string | null;
  rule: string;
  version: number;
}

function releaseQuery(db: Db) {
  return db
    .selectFrom('collection_actions as a')
    .innerJoin('loans as l', 'l.id', 'a.loan_id')
    .leftJoin('devices as d', 'd.imei1', 'a.imei1')
    .select([
      'a.id',
      'a.loan_id',
      'l.loan_ref',
      'a.imei1',
      'l.customer_name',
      'd.retailer_phone',
      sql<Date | null>`(SELECT max(i.paid_at) FROM loan_instalments i WHERE i.loan_id = a.loan_id)`.as(
        'paid_at',
      ),
      'a.created_at',
      'a.state',
      releaseStateSql.as('release_state'),
      'a.decided_by',
      'a.decided_at',
      'a.transaction_id',
      'a.rule',
      'a.version',
    ])
    .where('a.kind', '=', 'RELEASE');
}

/** Releases in an API state (`releaseStateSql`), newest first, at most 500. */
export async function listReleases(
  db: Db,
  state: ReleaseState,
  { retailerPhone }: TenantScope,
  imei1: string | null = null,
): Promise<ReleaseRow[]> {
  let query = releaseQuery(db).orderBy('a.id', 'desc').limit(500);
  if (imei1 !== null) query = query.where('a.imei1', '=', imei1);
  // The queue's own index (collection_actions_awaiting) for the default list.
  if (state === 'AWAITING_APPROVAL') query = query.where('a.state', '=', 'AWAITING_APPROVAL');
  else query = query.where(releaseStateSql, '=', state);
  if (retailerPhone !== null) query = query.where('d.retailer_phone', '=', retailerPhone);
  return query.execute() as Promise<ReleaseRow[]>;
}

/** One release action by id (whatever its state), or undefined. */
export async function findRelease(db: Db, id: number): Promise<ReleaseRow | undefined> {
  return releaseQuery(db).where('a.id', '=', id).executeTakeFirst() as Promise<ReleaseRow | undefined>;
}

/** A release action, locked for its decision. */
export async function lockRelease(trx: Transaction<DB>, id: number): Promise<ReleaseRow | undefined> {
  const locked = await trx
    .selectFrom('collection_actions')
    .select('id')
    .where('id', '=', id)
    .where('kind', '=', 'RELEASE')
    .forUpdate()
    .executeTakeFirst();
  if (!locked) return undefined;
  return findRelease(trx, id);
}

export async function decideRelease(
  trx: Transaction<DB>,
  id: number,
  values: {
    state: CollectionActionState;
    decidedBy: string;
    userId: number | null;
    note: string | null;
    commandId: number | null;
    transactionId: string | null;
  },
): Promise<void> {
  await trx
    .updateTable('collection_actions')
    .set({
      state: values.state,
      decided_by: values.decidedBy,
      decided_by_user_id: values.userId,
      decided_at: sql<Date>`now()`,
      note: values.note,
      command_id: values.commandId,
      transaction_id: values.transactionId,
    })
    .where('id', '=', id)
    .execute();
}

// ---- Daily runs ----

export interface RunRow {
  id: number;
  run_date: string;
  version: number;
  state: CollectionRunState;
  lease_owner: string | null;
  cursor: number;
  processed: number;
  counts: unknown;
  resumes: number;
  note: string | null;
  started_at: Date;
  finished_at: Date | null;
}

const RUN_COLUMNS = [
  'id',
  sql<string>`run_date::text`.as('run_date'),
  'version',
  'state',
  'lease_owner',
  'cursor',
  'processed',
  'counts',
  'resumes',
  'note',
  'started_at',
  'finished_at',
] as const;

function runOf(row: RunRow): RunRow {
  return { ...row, id: Number(row.id), cursor: Number(row.cursor), processed: Number(row.processed) };
}

export async function findRun(db: Db, date: string): Promise<RunRow | undefined> {
  const row = await db
    .selectFrom('collection_runs')
    .select(RUN_COLUMNS)
    .where('run_date', '=', date)
    .executeTakeFirst();
  return row ? runOf(row as RunRow) : undefined;
}

export async function recentRuns(db: Db, limit: number): Promise<RunRow[]> {
  const rows = await db
    .selectFrom('collection_runs')
    .select(RUN_COLUMNS)
    .orderBy('run_date', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => runOf(r as RunRow));
}

/** The day's run, created if it does not exist yet (once: run_date is unique). */
export async function ensureRun(db: Db, date: string, version: number): Promise<void> {
  await db
    .insertInto('collection_runs')
    .values({ run_date: date, version })
    .onConflict((oc) => oc.column('run_date').doNothing())
    .execute();
}

/**
 * Takes the lease of the day's run: when it runs (or was stopped by the kill switch, now off) and no
 * other instance holds a live lease. Taking over an expired lease of another instance counts a resume.
 * The lease is timed by the database's clock, the one every instance shares.
 */
export async function takeLease(
  db: Db,
  date: string,
  owner: string,
  leaseMs: number,
): Promise<RunRow | undefined> {
  const result = await sql<RunRow>`
    UPDATE collection_runs SET
      resumes = resumes + CASE WHEN lease_owner IS NOT NULL AND lease_owner <> ${owner} THEN 1 ELSE 0 END,
      state = 'RUNNING', note = NULL,
      lease_owner = ${owner}, lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE run_date = ${date}::date AND state IN ('RUNNING', 'STOPPED')
      AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_until < now())
    RETURNING id, run_date::text AS run_date, version, state, lease_owner, cursor, processed, counts, resumes,
      note, started_at, finished_at`.execute(db);
  const row = result.rows[0];
  return row ? runOf(row) : undefined;
}

/**
 * In a chunk's transaction: the run's row, locked, if `owner` still holds its lease (another instance
 * that took over an expired lease has moved on: this chunk must not run).
 */
export async function lockRunIfLeased(
  trx: Transaction<DB>,
  id: number,
  owner: string,
  leaseMs: number,
): Promise<RunRow | undefined> {
  const result = await sql<RunRow>`
    UPDATE collection_runs SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ${id} AND lease_owner = ${owner} AND state = 'RUNNING'
    RETURNING id, run_date::text AS run_date, version, state, lease_owner, cursor, processed, counts, resumes,
      note, started_at, finished_at`.execute(trx);
  const row = result.rows[0];
  return row ? runOf(row) : undefined;
}

export async function advanceRun(
  trx: Transaction<DB>,
  id: number,
  values: { cursor: number; processed: number; counts: unknown },
): Promise<void> {
  await trx
    .updateTable('collection_runs')
    .set({ cursor: values.cursor, processed: values.processed, counts: JSON.stringify(values.counts) })
    .where('id', '=', id)
    .execute();
}

export async function finishRun(
  db: Db,
  id: number,
  owner: string,
  state: 'DONE' | 'STOPPED',
  note: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('collection_runs')
    .set({
      state,
      note,
      lease_owner: null,
      lease_until: null,
      finished_at: state === 'DONE' ? sql<Date>`now()` : null,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives up the lease (the instance stops, or the quiet hours begin): another instance may go on at once. */
export async function releaseLease(db: Db, id: number, owner: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Runs still RUNNING of earlier days: the day ended before they finished. */
export async function stopStaleRuns(db: Db, today: string, note: string): Promise<number> {
  const result = await db
    .updateTable('collection_runs')
    .set({ state: 'STOPPED', note, lease_owner: null, lease_until: null })
    .where('run_date', '<', today)
    .where('state', 'in', ['RUNNING', 'STOPPED'])
    .where((eb) => eb.or([eb('note', 'is', null), eb('note', '<>', note)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The kill switch went on: the running runs stop (the chunk under way commits first: see readControl). */
export async function stopRunningRuns(db: Db, note: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({ state: 'STOPPED', note })
    .where('state', '=', 'RUNNING')
    .execute();
}
