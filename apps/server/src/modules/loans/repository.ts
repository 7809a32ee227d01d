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

/**
 * Which tenants' references a look-up by ref reads (migration 0033: a `loan_ref` or `payment_ref` is unique
 * per tenant). The service decides it from the authority module's scope; the repository applies it:
 * - `{ tenant }`: that tenant's references only (a retailer's phone, or null for the lender's own);
 * - `'any'`: every tenant's (a lender-wide call that names none): the service refuses an ambiguous answer.
 */
export type RefTenants = { readonly tenant: string | null } | 'any';

/** `ref`'s tenant filter on a table's `retailer_phone` column (`column`: its qualified name). */
function ofRefTenants(column: 'l.retailer_phone' | 'p.retailer_phone', tenants: RefTenants) {
  if (tenants === 'any') return sql<boolean>`true`;
  return tenants.tenant === null
    ? sql<boolean>`${sql.ref(column)} IS NULL`
    : sql<boolean>`${sql.ref(column)} = ${tenants.tenant}`;
}

/** The key of a reference in its tenant (maps of refs over several tenants). */
export const refKey = (tenant: string | null, ref: string) => `${tenant ?? ''}\u0000${ref}`;

/** The most rows a look-up by ref reads: one is the answer; two say that it is ambiguous. */
const AMBIGUOUS = 2;

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
  /** The tenant of its references (0033). */
  refTenant: string | null;
  /** The retailer of its device (who may see it). */
  retailerPhone: string | null;
  instalments: { dueDate: string; amountMinor: number }[];
}

/**
 * The loans of these refs, in every tenant, with their schedules (for the import's "same or different"
 * decision), keyed by `refKey(tenant, ref)`: the import reads the key of its device's tenant only.
 */
export async function loansByRefs(db: Db, refs: readonly string[]): Promise<Map<string, StoredLoan>> {
  if (refs.length === 0) return new Map();
  const loans = await db
    .selectFrom('loans as l')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select([
      'l.id',
      'l.loan_ref',
      'l.imei',
      'l.customer_name',
      'l.currency',
      'l.status',
      'l.retailer_phone as ref_tenant',
      'd.retailer_phone',
    ])
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
        refTenant: l.ref_tenant,
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
  return new Map([...byId.values()].map((l) => [refKey(l.refTenant, l.loanRef), l]));
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

/** A loan to write: its checked fields on the device's imei1, and its tenant (the device's retailer). */
export type NewLoan = CheckedLoan & { imei1: string; tenant: string | null };

const IMPORT_CHUNK = 5000;

/** Inserts new loans and their schedules, set-based, a chunk of loans per pair of statements. */
export async function insertLoans(
  trx: Transaction<DB>,
  loans: readonly NewLoan[],
  createdBy: string,
): Promise<void> {
  for (let start = 0; start < loans.length; start += IMPORT_CHUNK) {
    const chunk = loans.slice(start, start + IMPORT_CHUNK);
    // In input order (WITH ORDINALITY): the ids come back beside their loans.
    const inserted = await sql<{
      id: string;
      n: string;
    }>`INSERT INTO loans (loan_ref, imei, customer_name, currency, created_by, retailer_phone)
      SELECT r, i, n, c, ${createdBy}, t
      FROM unnest(${chunk.map((l) => l.loanRef)}::text[], ${chunk.map((l) => l.imei1)}::text[],
                  ${chunk.map((l) => l.customerName)}::text[], ${chunk.map((l) => l.currency)}::text[],
                  ${chunk.map((l) => l.tenant)}::text[]) WITH ORDINALITY AS v(r, i, n, c, t, o)
      ORDER BY o
      RETURNING id`.execute(trx);
    await insertSchedules(
      trx,
      chunk.map((loan, n) => ({ id: Number(inserted.rows[n]?.id), loan })),
    );
  }
}

/** Writes the schedules of loans by their ids (a ref names a loan only within its tenant). */
async function insertSchedules(
  trx: Transaction<DB>,
  loans: readonly { id: number; loan: CheckedLoan }[],
): Promise<void> {
  const ids: number[] = [];
  const seqs: number[] = [];
  const days: string[] = [];
  const amounts: string[] = [];
  for (const { id, loan } of loans)
    loan.instalments.forEach((instalment, i) => {
      ids.push(id);
      seqs.push(i + 1);
      days.push(instalment.dueDate);
      amounts.push(String(instalment.amountMinor));
    });
  await sql`INSERT INTO loan_instalments (loan_id, seq, due_date, amount_minor)
    SELECT v.l, v.s, v.d, v.a
    FROM unnest(${ids}::bigint[], ${seqs}::int[], ${days}::date[], ${amounts}::bigint[]) AS v(l, s, d, a)`.execute(
    trx,
  );
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
  await insertSchedules(trx, [{ id: loanId, loan }]);
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

/**
 * The loans of a ref in `tenants` (at most two: one is the answer, two are ambiguous), locked for a payment
 * or a promise (their rows, for the rest of the transaction), each with its references' tenant and its
 * device's retailer.
 */
export async function lockLoansByRef(trx: Transaction<DB>, loanRef: string, tenants: RefTenants) {
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
      'l.retailer_phone as ref_tenant',
      'd.retailer_phone',
    ])
    .where('l.loan_ref', '=', loanRef)
    .where(ofRefTenants('l.retailer_phone', tenants))
    .orderBy('l.id')
    .limit(AMBIGUOUS)
    .forUpdate('l')
    .execute();
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
 * Records a payment once per payment_ref in its tenant (its loan's, `tenant`): the new row, or null when the
 * ref is taken there (then the caller reads the recorded one). A concurrent insert of the same ref in the
 * same tenant waits for the first to commit, then gets null.
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
    tenant: string | null;
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
      retailer_phone: payment.tenant,
    })
    // The unique index loan_payments_ref_per_tenant (0033).
    .onConflict((oc) => oc.expression(sql`payment_ref, (coalesce(retailer_phone, ''))`).doNothing())
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
 * The payments of a ref in `tenants` (at most two: one is the answer, two are ambiguous), each with its loan
 * and the loan's device's retailer, the payments' and the loans' rows locked for the rest of the
 * transaction (a reversal: a payment or another reversal of the loan waits).
 */
export async function lockPaymentsByRef(trx: Transaction<DB>, paymentRef: string, tenants: RefTenants) {
  const rows = await trx
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
    .where(ofRefTenants('p.retailer_phone', tenants))
    .orderBy('p.id')
    .limit(AMBIGUOUS)
    .forUpdate(['p', 'l'])
    .execute();
  return rows.map(({ loan_ref, imei, currency, status, retailer_phone, ...payment }) => ({
    payment: normalisePayment(payment),
    loan: { loanRef: loan_ref, imei, currency: currency.trim(), status, retailerPhone: retailer_phone },
  }));
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
      reversed_at: sql<Date>`now()`,
      reversed_by: values.by,
      reversal_reason: values.reason,
    })
    .where('id', '=', id)
    .returning(PAYMENT_COLUMNS)
    .executeTakeFirstOrThrow();
  return normalisePayment(row);
}

/** The payment recorded under a ref in one tenant (idempotency: a ref seen before there). */
export async function paymentByRef(
  db: Db,
  paymentRef: string,
  tenant: string | null,
): Promise<PaymentRow | undefined> {
  const row = await db
    .selectFrom('loan_payments as p')
    .select(PAYMENT_COLUMNS.map((column) => `p.${column}` as const))
    .where('p.payment_ref', '=', paymentRef)
    .where(ofRefTenants('p.retailer_phone', { tenant }))
    .executeTakeFirst();
  return row ? normalisePayment(row) : undefined;
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

/** A loan found for a view: its id and its device's retailer (who may see it). */
interface FoundLoan {
  id: number;
  retailerPhone: string | null;
}

/** Which loan of a device (either IMEI) a view shows: its OPEN loan, else its latest. */
export async function loanOfImei(db: Db, imei: string): Promise<FoundLoan | null> {
  const row = await db
    .selectFrom('device_imeis as i')
    .innerJoin('devices as d', 'd.imei1', 'i.device')
    .innerJoin('loans as l', 'l.imei', 'd.imei1')
    .select(['l.id', 'd.retailer_phone'])
    .where('i.imei', '=', imei)
    .orderBy(sql`l.status = 'OPEN'`, 'desc')
    .orderBy('l.id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { id: Number(row.id), retailerPhone: row.retailer_phone } : null;
}

/** The loans of a ref in `tenants` (at most two: one is the answer, two are ambiguous). */
export async function loansOfRef(db: Db, loanRef: string, tenants: RefTenants): Promise<FoundLoan[]> {
  const rows = await db
    .selectFrom('loans as l')
    .leftJoin('devices as d', 'd.imei1', 'l.imei')
    .select(['l.id', 'd.retailer_phone'])
    .where('l.loan_ref', '=', loanRef)
    .where(ofRefTenants('l.retailer_phone', tenants))
    .orderBy('l.id')
    .limit(AMBIGUOUS)
    .execute();
  return rows.map((r) => ({ id: Number(r.id), retailerPhone: r.retailer_phone }));
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
      'retailer_phone',
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
    retailerPhone: loan.retailer_phone,
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
