/**
 * 0031: collections' payment watcher has a row of its own; failed automated actions are retried.
 *
 * - `collection_payment_watch`: one row, the payment watcher's cursor, moved out of `collection_control`.
 *   Each watcher pass takes it `FOR UPDATE SKIP LOCKED` for its whole transaction: one instance's watcher
 *   works at a time and another skips its pass (nothing waits, so nothing deadlocks); the watcher no longer
 *   touches the control row that the kill switch, policy saves and the daily run's chunks lock. (Before,
 *   two watchers each read the control row FOR SHARE and then updated it: a deadlock whenever they
 *   overlapped.) `collection_control.payment_cursor` stays, unused, for instances not yet upgraded.
 * - `collection_actions`: two states more, RETRYING (a LOCK, UNLOCK or RELEASE whose command failed, sent
 *   again after a backoff) and FAILED (given up); `attempts` (commands sent for the action) and `retry_at`
 *   (when the next attempt is due). The retry pass reads the day's device actions not yet settled through
 *   a partial index (LOCK/UNLOCK/RELEASE, ISSUED or RETRYING, by day).
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE collection_payment_watch (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    payment_cursor bigint NOT NULL DEFAULT 0
  )`,
  `INSERT INTO collection_payment_watch (payment_cursor) SELECT payment_cursor FROM collection_control`,
  `ALTER TABLE collection_actions ADD COLUMN attempts int NOT NULL DEFAULT 1,
    ADD COLUMN retry_at timestamptz`,
  `ALTER TABLE collection_actions DROP CONSTRAINT collection_actions_state_check`,
  `ALTER TABLE collection_actions ADD CONSTRAINT collection_actions_state_check
    CHECK (state IN ('ISSUED', 'REFUSED', 'SKIPPED', 'AWAITING_APPROVAL', 'REJECTED', 'RETRYING', 'FAILED'))`,
  `CREATE INDEX collection_actions_unsettled ON collection_actions (action_date)
    WHERE kind IN ('LOCK', 'UNLOCK', 'RELEASE') AND state IN ('ISSUED', 'RETRYING')`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
