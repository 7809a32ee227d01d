/**
 * Failed automated actions: the device actions the retry pass looks at and what it makes of them, and a
 * device's actions retrying or given up (Device Details).
 */
import type { CollectionAction } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { CollectionActionState, DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

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
