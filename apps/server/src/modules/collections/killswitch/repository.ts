/**
 * The kill switch (`collection_control`, one row, also locked to number policy saves one after the other
 * and held shared by a chunk of the daily run), and the automated commands it cancels while still QUEUED.
 */
import { COLLECTION_RELIEF } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

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

export interface CancelledCommand {
  transaction_id: string;
  imei1: string;
  command: string;
  status: 'CANCELLED';
  interface: 'C';
  batch_id: number | null;
  result: string;
}

/**
 * Cancels, with `result`, every automated command (interface C) still QUEUED but relief (an unlock or a
 * release, COLLECTION_RELIEF): the kill switch went on.
 */
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
