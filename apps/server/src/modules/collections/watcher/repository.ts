/** The payment watcher's cursor (`collection_payment_watch`, one row) and the payments it looks at. */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

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
