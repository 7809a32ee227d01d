/**
 * The queries of loans and payments (migrations 0022, 0030). Two parts:
 * - the writers of modules/loans/service.ts: the import (set-based), a payment and its allocation, a
 *   payment's reversal (the loan allocated again from the payments that stand), the promise to pay; each
 *   runs in the caller's transaction;
 * - the read-only views other modules may import (the collections engine among them): a loan's status,
 *   its summary by IMEI or ref (`loanSummaryOfImei`, `loanViewById`), and the position of every open loan
 *   on a day, set-based (`openLoanPositions`), which computes the contract's `loanPosition` in SQL (the
 *   loans test proves that both agree).
 */
import {
  allocatePayment,
  type CheckedLoan,
  type InstalmentState,
  type LoanPayment,
  type LoanSummary,
  type LoanView,
  loanPosition,
} from '@lendlock/contract';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { DB, LoanStatus, PaymentSource } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

/** A device a loan may be on: the IMEI it was named by, its imei1, its retailer and its state. */
export interface LoanDevice {
  imei: string;
  imei1: string;
  retailerPhone: string | null;
  claimstatus: string;
}

/** The devices of `imeis` (by either IMEI), keyed by the IMEI asked for. */
export async function devicesOfImeis(db: Db, imeis: readonly string[]): Promise<Map<string, LoanDevice>> {
  if (imeis.length === 0) return new Map();
  const rows = await db
    .selectFrom('device_imeis as i')
    .innerJoin('devices as d', 'd.imei1', 'i.device')
    .select(['i.imei', 'd.imei1', 'd.retailer_phone', 'd.claimstatus'])
    .where('i.imei', '=', sql<string>`ANY(${[...new Set(imeis)]}::text[])`)
    .execute();
  return new Map(
    rows.map((r) => [
      r.imei,
      { imei: r.imei, imei1: r.imei1, retailerPhone: r.retailer_phone, claimstatus: r.claimstatus },
    ]),
  );
}

/** The advisory lock key of loan imports (hashtext('lendlock:loans-import')). */
const IMPORT_LOCK = sql`hashtext('lendlock:loans-import')`;

/**
 * Serialises loan imports, whichever instance runs them, for the rest of the transaction: one lock (not one
 * per loan, which a 100,000-loan file would exhaust the lock table with). Imports are rare; payments do not
 * take it (they lock their loan's row, as a replacement does); a reversal, rarer still, takes it before its
 * loan's row (it may open a paid loan again beside an imported one).
 */
export async function lockImports(trx: Transaction<DB>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${IMPORT_LOCK})`.execute(trx);
}

export interface StoredLoan {
  id: number;
  loanRef: string;
  imei: string;
  customerName: string;
  currency: string;
  status: LoanStatus;
  /** The retailer of its device (scoping). */
  retailerPhone: string | null;
  instalments: { dueDate: string; amountMinor: number }[];
}

/** The loans of these refs with their schedules (for the import's "same or different" decision). */
export async function loansByRefs(db: Db, refs: readonly string[]): Promise<Map<string, StoredLoan>> {
  if (refs.length === 0) return new Map();
  const loans = await db
    .selectFrom('loans as l')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select(['l.id', 'l.loan_ref', 'l.imei', 'l.customer_name', 'l.currency', 'l.status', 'd.retailer_phone'])
    .where('l.loan_ref', '=', sql<string>`ANY(${[...new Set(refs)]}::text[])`)
    .execute();
  const byId = new Map<number, StoredLoan>(
    loans.map((l) => [
      l.id,
      {
        id: l.id,
        loanRef: l.loan_ref,
        imei: l.imei,
        customerName: l.customer_name,
        currency: l.currency,
        status: l.status,
        retailerPhone: l.retailer_phone,
        instalments: [],
      },
    ]),
  );
  if (byId.size > 0) {
    const instalments = await db
      .selectFrom('loan_instalments')
      .select(['loan_id', 'seq', sql<string>`due_date::text`.as('due'), 'amount_minor'])
      .where('loan_id', '=', sql<number>`ANY(${[...byId.keys()]}::bigint[])`)
      .orderBy('loan_id')
      .orderBy('seq')
      .execute();
    for (const i of instalments)
      byId.get(Number(i.loan_id))?.instalments.push({ dueDate: i.due, amountMinor: Number(i.amount_minor) });
  }
  return new Map([...byId.values()].map((l) => [l.loanRef, l]));
}

/** The ref of the OPEN loan of each of these devices (by imei1). */
export async function openLoansOfImeis(db: Db, imei1s: readonly string[]): Promise<Map<string, string>> {
  if (imei1s.length === 0) return new Map();
  const rows = await db
    .selectFrom('loans')
    .select(['imei', 'loan_ref'])
    .where('status', '=', 'OPEN')
    .where('imei', '=', sql<string>`ANY(${[...new Set(imei1s)]}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.imei, r.loan_ref]));
}

/** A loan to write: its checked fields on the device's imei1. */
export type NewLoan = CheckedLoan & { imei1: string };

const IMPORT_CHUNK = 5000;

/** Inserts new loans and their schedules, set-based, a chunk of loans per pair of statements. */
export async function insertLoans(
  trx: Transaction<DB>,
  loans: readonly NewLoan[],
  createdBy: string,
): Promise<void> {
  for (let start = 0; start < loans.length; start += IMPORT_CHUNK) {
    const chunk = loans.slice(start, start + IMPORT_CHUNK);
    await sql`INSERT INTO loans (loan_ref, imei, customer_name, currency, created_by)
      SELECT r, i, n, c, ${createdBy}
      FROM unnest(${chunk.map((l) => l.loanRef)}::text[], ${chunk.map((l) => l.imei1)}::text[],
                  ${chunk.map((l) => l.customerName)}::text[], ${chunk.map((l) => l.currency)}::text[]) AS v(r, i, n, c)`.execute(
      trx,
    );
    await insertSchedules(trx, chunk);
  }
}

async function insertSchedules(trx: Transaction<DB>, loans: readonly CheckedLoan[]): Promise<void> {
  const refs: string[] = [];
  const seqs: number[] = [];
  const days: string[] = [];
  const amounts: string[] = [];
  for (const loan of loans)
    loan.instalments.forEach((instalment, i) => {
      refs.push(loan.loanRef);
      seqs.push(i + 1);
      days.push(instalment.dueDate);
      amounts.push(String(instalment.amountMinor));
    });
  await sql`INSERT INTO loan_instalments (loan_id, seq, due_date, amount_minor)
    SELECT l.id, v.s, v.d, v.a
    FROM unnest(${refs}::text[], ${seqs}::int[], ${days}::date[], ${amounts}::bigint[]) AS v(r, s, d, a)
    JOIN loans l ON l.loan_ref = v.r`.execute(trx);
}

/**
 * Replaces a loan's device, name, currency and schedule, then applies its payments again, oldest first,
 * with the one allocation (`allocateToInstalments`): what was paid stays paid, on the new schedule.
 */
export async function replaceLoan(trx: Transaction<DB>, loanId: number, loan: NewLoan): Promise<void> {
  // Its row first, as a payment takes it: a payment and a replacement of one loan wait for each other.
  await trx.selectFrom('loans').select('id').where('id', '=', loanId).forUpdate().execute();
  await trx
    .updateTable('loans')
    .set({ imei: loan.imei1, customer_name: loan.customerName, currency: loan.currency, status: 'OPEN' })
    .where('id', '=', loanId)
    .execute();
  await trx.deleteFrom('loan_instalments').where('loan_id', '=', loanId).execute();
  await insertSchedules(trx, [loan]);
  await reapplyPayments(trx, loanId);
  await settleStatus(trx, loanId);
}

/**
 * Allocates a loan's instalments again from nothing, with its payments that stand (not reversed), oldest
 * paid first, each with the one allocation (`allocateToInstalments`): after a new schedule, or a reversal.
 * The caller holds the loan's row and sets its status after (`settleStatus`).
 */
export async function reapplyPayments(trx: Transaction<DB>, loanId: number): Promise<void> {
  await trx
    .updateTable('loan_instalments')
    .set({ paid_minor: 0, paid_at: null })
    .where('loan_id', '=', loanId)
    .execute();
  const payments = await trx
    .selectFrom('loan_payments')
    .select(['amount_minor', 'paid_at'])
    .where('loan_id', '=', loanId)
    .where('reversed_at', 'is', null)
    .orderBy('paid_at')
    .orderBy('id')
    .execute();
  for (const payment of payments)
    await allocateToInstalments(trx, loanId, Number(payment.amount_minor), new Date(payment.paid_at));
}

/** A loan locked for a payment or a promise (its row, for the rest of the transaction), with its device's retailer. */
export async function lockLoanByRef(trx: Transaction<DB>, loanRef: string) {
  return trx
    .selectFrom('loans as l')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select([
      'l.id',
      'l.loan_ref',
      'l.imei',
      'l.currency',
      'l.status',
      sql<string | null>`l.promise_to_pay_until::text`.as('promise'),
      'd.retailer_phone',
    ])
    .where('l.loan_ref', '=', loanRef)
    .forUpdate('l')
    .executeTakeFirst();
}

/** The instalments of a loan, in order, as the contract's rules take them. */
export async function instalmentsOf(db: Db, loanId: number): Promise<InstalmentState[]> {
  const rows = await db
    .selectFrom('loan_instalments')
    .select(['seq', sql<string>`due_date::text`.as('due'), 'amount_minor', 'paid_minor'])
    .where('loan_id', '=', loanId)
    .orderBy('seq')
    .execute();
  return rows.map((r) => ({
    seq: r.seq,
    dueDate: r.due,
    amountMinor: Number(r.amount_minor),
    paidMinor: Number(r.paid_minor),
  }));
}

/**
 * THE allocation of a payment, inside its transaction (the loan's row locked by the caller): the oldest
 * unpaid instalment first (the contract's `allocatePayment`), an instalment's `paid_at` set by the payment
 * that completes it. Returns the credit left once every instalment is paid.
 */
export async function allocateToInstalments(
  trx: Transaction<DB>,
  loanId: number,
  amountMinor: number,
  paidAt: Date,
): Promise<number> {
  const { allocations, creditMinor } = allocatePayment(await instalmentsOf(trx, loanId), amountMinor);
  for (const allocation of allocations)
    await trx
      .updateTable('loan_instalments')
      .set({ paid_minor: allocation.paidMinor, ...(allocation.settles ? { paid_at: paidAt } : {}) })
      .where('loan_id', '=', loanId)
      .where('seq', '=', allocation.seq)
      .execute();
  return creditMinor;
}

/** Sets the loan PAID when every instalment is paid (OPEN otherwise); returns the status. */
export async function settleStatus(trx: Transaction<DB>, loanId: number): Promise<LoanStatus> {
  const row = await sql<{ status: LoanStatus }>`UPDATE loans SET status = CASE WHEN EXISTS (
      SELECT 1 FROM loan_instalments WHERE loan_id = ${loanId} AND paid_minor < amount_minor) THEN 'OPEN' ELSE 'PAID' END
    WHERE id = ${loanId} RETURNING status`.execute(trx);
  return row.rows[0]?.status ?? 'OPEN';
}

export interface PaymentRow {
  id: number;
  loan_id: number;
  payment_ref: string;
  amount_minor: number;
  paid_at: Date;
  received_at: Date;
  source: PaymentSource | null;
  recorded_by: string | null;
  reversed_at: Date | null;
  reversed_by: string | null;
  reversal_reason: string | null;
}

const PAYMENT_COLUMNS = [
  'id',
  'loan_id',
  'payment_ref',
  'amount_minor',
  'paid_at',
  'received_at',
  'source',
  'recorded_by',
  'reversed_at',
  'reversed_by',
  'reversal_reason',
] as const;

/**
 * Records a payment once per payment_ref: the new row, or null when the ref is taken (then the caller
 * reads the recorded one). A concurrent insert of the same ref waits for the first to commit, then gets null.
 */
export async function insertPayment(
  trx: Transaction<DB>,
  payment: {
    loanId: number;
    paymentRef: string;
    amountMinor: number;
    paidAt: Date;
    source: PaymentSource;
    recordedBy: string;
  },
): Promise<PaymentRow | null> {
  const row = await trx
    .insertInto('loan_payments')
    .values({
      loan_id: payment.loanId,
      payment_ref: payment.paymentRef,
      amount_minor: payment.amountMinor,
      paid_at: payment.paidAt,
      source: payment.source,
      recorded_by: payment.recordedBy,
    })
    .onConflict((oc) => oc.column('payment_ref').doNothing())
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirst();
  return row ? normalisePayment(row) : null;
}

function normalisePayment(row: PaymentRow): PaymentRow {
  return {
    ...row,
    id: Number(row.id),
    loan_id: Number(row.loan_id),
    amount_minor: Number(row.amount_minor),
    paid_at: new Date(row.paid_at),
    received_at: new Date(row.received_at),
    reversed_at: row.reversed_at === null ? null : new Date(row.reversed_at),
  };
}

/** A payment as the API shows it. */
export function paymentView(row: PaymentRow): LoanPayment {
  return {
    paymentRef: row.payment_ref,
    amountMinor: row.amount_minor,
    paidAt: row.paid_at.toISOString(),
    receivedAt: row.received_at.toISOString(),
    source: row.source,
    recordedBy: row.recorded_by,
    reversedAt: row.reversed_at?.toISOString() ?? null,
    reversedBy: row.reversed_by,
    reversalReason: row.reversal_reason,
  };
}

/**
 * A payment by its ref, with its loan and the loan's device's retailer, the payment's and the loan's rows
 * locked for the rest of the transaction (a reversal: a payment or another reversal of the loan waits).
 */
export async function lockPaymentByRef(trx: Transaction<DB>, paymentRef: string) {
  const row = await trx
    .selectFrom('loan_payments as p')
    .innerJoin('loans as l', 'l.id', 'p.loan_id')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select([
      ...PAYMENT_COLUMNS.map((column) => `p.${column}` as const),
      'l.loan_ref',
      'l.imei',
      'l.currency',
      'l.status',
      'd.retailer_phone',
    ])
    .where('p.payment_ref', '=', paymentRef)
    .forUpdate(['p', 'l'])
    .executeTakeFirst();
  if (!row) return undefined;
  const { loan_ref, imei, currency, status, retailer_phone, ...payment } = row;
  return {
    payment: normalisePayment(payment),
    loan: { loanRef: loan_ref, imei, currency: currency.trim(), status, retailerPhone: retailer_phone },
  };
}

/** Marks a payment reversed (now, by whom, why); the row after. */
export async function markReversed(
  trx: Transaction<DB>,
  id: number,
  values: { by: string; reason: string },
): Promise<PaymentRow> {
  const row = await trx
    .updateTable('loan_payments')
    .set({
      reversed_at: sql<Date>`now()` as unknown as Date,
      reversed_by: values.by,
      reversal_reason: values.reason,
    })
    .where('id', '=', id)
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return normalisePayment(row);
}

/** The payments recorded under these refs (idempotency: a ref seen before). */
export async function paymentsByRefs(db: Db, refs: readonly string[]): Promise<Map<string, PaymentRow>> {
  if (refs.length === 0) return new Map();
  const rows = await db
    .selectFrom('loan_payments')
    .select(PAYMENT_COLUMNS)
    .where('payment_ref', '=', sql<string>`ANY(${[...new Set(refs)]}::text[])`)
    .execute();
  return new Map(rows.map((r) => [r.payment_ref, normalisePayment(r)]));
}

/** Sets or clears a loan's promise-to-pay day. */
export async function setPromise(trx: Transaction<DB>, loanId: number, until: string | null): Promise<void> {
  await trx.updateTable('loans').set({ promise_to_pay_until: until }).where('id', '=', loanId).execute();
}

// ---- Read-only views (Device Details, the API, the collections engine) ----

/** A loan's status (OPEN, PAID), or null when there is no such loan. */
export async function loanStatus(db: Db, loanId: number): Promise<LoanStatus | null> {
  const row = await db.selectFrom('loans').select('status').where('id', '=', loanId).executeTakeFirst();
  return row?.status ?? null;
}

/** Which loan of a device a view shows: its OPEN loan, else its latest. */
async function loanIdOfImei(db: Db, imei: string, retailerPhone: string | null): Promise<number | null> {
  const row = await db
    .selectFrom('device_imeis as i')
    .innerJoin('devices as d', 'd.imei1', 'i.device')
    .innerJoin('loans as l', 'l.imei', 'd.imei1')
    .select('l.id')
    .where('i.imei', '=', imei)
    .$if(retailerPhone !== null, (q) => q.where('d.retailer_phone', '=', retailerPhone ?? ''))
    .orderBy(sql`l.status = 'OPEN'`, 'desc')
    .orderBy('l.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/** A loan's id by its ref, when the principal's retailer (if any) has its device. */
export async function loanIdOfRef(
  db: Db,
  loanRef: string,
  retailerPhone: string | null,
): Promise<number | null> {
  const row = await db
    .selectFrom('loans as l')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select('l.id')
    .where('l.loan_ref', '=', loanRef)
    .$if(retailerPhone !== null, (q) => q.where('d.retailer_phone', '=', retailerPhone ?? ''))
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

const PAYMENTS_SHOWN = 100;

/**
 * A loan as the API shows it, on `day` (YYYY-MM-DD in `timeZone`): its schedule, its latest payments and
 * its summary (the contract's `loanPosition`, the credit, the last payment).
 */
export async function loanViewById(
  db: Db,
  loanId: number,
  at: { day: string; timeZone: string },
): Promise<LoanView | null> {
  const loan = await db
    .selectFrom('loans')
    .select([
      'loan_ref',
      'imei',
      'customer_name',
      'currency',
      'status',
      sql<string | null>`promise_to_pay_until::text`.as('promise'),
      'created_at',
      'created_by',
    ])
    .where('id', '=', loanId)
    .executeTakeFirst();
  if (!loan) return null;
  const rows = await db
    .selectFrom('loan_instalments')
    .select(['seq', sql<string>`due_date::text`.as('due'), 'amount_minor', 'paid_minor', 'paid_at'])
    .where('loan_id', '=', loanId)
    .orderBy('seq')
    .execute();
  const instalments = rows.map((r) => ({
    seq: r.seq,
    dueDate: r.due,
    amountMinor: Number(r.amount_minor),
    paidMinor: Number(r.paid_minor),
    paidAt: r.paid_at ? new Date(r.paid_at).toISOString() : null,
  }));
  const payments = (
    await db
      .selectFrom('loan_payments')
      .select(PAYMENT_COLUMNS)
      .where('loan_id', '=', loanId)
      .orderBy('paid_at', 'desc')
      .orderBy('id', 'desc')
      .limit(PAYMENTS_SHOWN)
      .execute()
  ).map((r) => paymentView(normalisePayment(r)));
  const received = await db
    .selectFrom('loan_payments')
    .select(sql<string>`coalesce(sum(amount_minor), 0)::text`.as('total'))
    .where('loan_id', '=', loanId)
    .where('reversed_at', 'is', null)
    .executeTakeFirstOrThrow();
  const position = loanPosition(instalments, at.day);
  const summary: LoanSummary = {
    asOf: at.day,
    timeZone: at.timeZone,
    totalMinor: position.totalMinor,
    paidMinor: position.paidMinor,
    outstandingMinor: position.outstandingMinor,
    arrearsMinor: position.arrearsMinor,
    creditMinor: Math.max(0, Number(received.total) - position.paidMinor),
    daysOverdue: position.daysOverdue,
    overdueSince: position.overdueSince,
    instalmentsPaid: position.instalmentsPaid,
    instalmentsUnpaid: position.instalmentsUnpaid,
    nextDue: position.nextDue,
    lastPayment: payments.find((p) => p.reversedAt === null) ?? null,
  };
  return {
    loanRef: loan.loan_ref,
    imei: loan.imei,
    customerName: loan.customer_name,
    currency: loan.currency.trim(),
    status: loan.status,
    promiseToPayUntil: loan.promise,
    createdAt: new Date(loan.created_at).toISOString(),
    createdBy: loan.created_by,
    summary,
    instalments,
    payments,
  };
}

/**
 * The loan of a device (either IMEI; its OPEN loan, else its latest) on `day` in `timeZone`, or null.
 * `retailerPhone`: only a loan on that retailer's device (null: any). The view the collections engine and
 * Device Details share.
 */
export async function loanSummaryOfImei(
  db: Db,
  imei: string,
  at: { day: string; timeZone: string },
  retailerPhone: string | null = null,
): Promise<LoanView | null> {
  const id = await loanIdOfImei(db, imei, retailerPhone);
  return id === null ? null : loanViewById(db, id, at);
}

/**
 * The oldest due date of an unpaid instalment due before `day`, aggregated over the rows of
 * `loan_instalments` aliased `i`; NULL when there is none. With `daysOverdueSql`, the one SQL form of the
 * contract's days overdue (`loanPosition`), for the loan views and for the collections plan.
 */
export function overdueSinceSql(day: string): RawBuilder<string | null> {
  return sql<
    string | null
  >`min(i.due_date) FILTER (WHERE i.paid_minor < i.amount_minor AND i.due_date < ${day}::date)`;
}

/** Days overdue on `day`: the day minus `overdueSince` (overdueSinceSql), 0 when nothing is overdue. */
export function daysOverdueSql(day: string, overdueSince: RawBuilder<unknown>): RawBuilder<number> {
  return sql<number>`coalesce(${day}::date - ${overdueSince}, 0)`;
}

/**
 * The position of every OPEN loan on `day` (YYYY-MM-DD), set-based, for the collections engine's daily run
 * over a million loans: per loan, its arrears (unpaid amounts due before the day), its days overdue (the
 * day minus the oldest such due date; 0 when none), and its next unpaid instalment due on the day or later.
 * The same rules as the contract's `loanPosition` (test/loans.test.ts compares them). Use it as a subquery:
 * `db.selectFrom(openLoanPositions(db, day).as('p'))`.
 */
export function openLoanPositions(db: Db, day: string) {
  return db
    .selectFrom('loans as l')
    .innerJoin('loan_instalments as i', 'i.loan_id', 'l.id')
    .where('l.status', '=', 'OPEN')
    .groupBy(['l.id', 'l.loan_ref', 'l.imei', 'l.currency', 'l.promise_to_pay_until'])
    .select([
      'l.id as loanId',
      'l.loan_ref as loanRef',
      'l.imei as imei',
      sql<string>`l.currency::text`.as('currency'),
      sql<string | null>`l.promise_to_pay_until::text`.as('promiseToPayUntil'),
      sql<number>`coalesce(sum(i.amount_minor - i.paid_minor) FILTER (WHERE i.paid_minor < i.amount_minor AND i.due_date < ${day}::date), 0)::bigint`.as(
        'arrearsMinor',
      ),
      daysOverdueSql(day, overdueSinceSql(day)).as('daysOverdue'),
      sql<
        string | null
      >`(min(i.due_date) FILTER (WHERE i.paid_minor < i.amount_minor AND i.due_date >= ${day}::date))::text`.as(
        'nextDueDate',
      ),
      sql<number>`coalesce(sum(i.amount_minor - i.paid_minor) FILTER (WHERE i.paid_minor < i.amount_minor), 0)::bigint`.as(
        'outstandingMinor',
      ),
      sql<number>`count(*) FILTER (WHERE i.paid_minor < i.amount_minor)::int`.as('instalmentsUnpaid'),
    ]);
}
