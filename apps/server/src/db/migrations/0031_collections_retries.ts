/**
 * 0031: collections' payment watcher has a row of its own; failed automated actions are retried.
 *
 * - `collection_payment_watch`: one row, the payment watcher's cursor, moved out of `collection_control`.
 *   Each watcher pass takes it `FOR UPDATE SKIP LOCKED` for its whole transaction: one instance's watcher
 *   works at a time and another skips its pass (nothing waits, so nothing deadlocks); the watcher no longer
 *   touches the control row that the kill switch, policy saves and the daily run's chunks lock. (Before,
 *   two watchers each read the control row FOR SHARE and then updated it: a deadlock whenever they
 *   overlapped.) `collection_control.payment_cursor` stays, unused, for instances not yet upgraded.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE collection_payment_watch (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    payment_cursor bigint NOT NULL DEFAULT 0
  )`,
  `INSERT INTO collection_payment_watch (payment_cursor) SELECT payment_cursor FROM collection_control`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
