/**
 * The actions the plan causes (`collection_actions`): recorded once per device, day, group and trigger,
 * and the commands recorded for them.
 */
import type { CollectionAction, CollectionSkip } from '@lendlock/contract';
import { sql, type Transaction } from 'kysely';
import type { CollectionActionState, DB } from '../../../db/types';

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
