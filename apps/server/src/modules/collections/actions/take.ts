/**
 * The actions the plan causes (docs/features.md § Collections on autopilot). `takeActions` turns plan items
 * into recorded actions and their commands, in the caller's transaction, through the one command pipeline
 * (commands/issue.ts `recordCommandSet`): an action row and its command commit together, and an action
 * already recorded for its device, day and group (a run resumed after a crash) is not recorded again, so
 * no reminder or lock goes out twice.
 */
import {
  type CollectionsPolicy,
  type CommandOptions,
  formatAmount,
  notifyMessage,
  type PlanCounts,
  type RawCommand,
  ruleText,
} from '@lendlock/contract';
import type { Transaction } from 'kysely';
import type { CollectionActionState, DB } from '../../../db/types';
import type { CommandOutcome, CommandRequest, RecordOptions } from '../../commands/issue';
import { recordCommandSet } from '../../commands/issue';
import type { PlanRow } from '../plan/repository';
import { countsOf } from '../plan/service';
import { type ActionValues, insertActions, setActionCommands } from './repository';

const NOTIFY_TEMPLATE = { PRE: 'Pre', DUE: 'Due', POST: 'Post' } as const;

/** YYYY-MM-DD → DD/MM/YYYY, as the notify texts write a date. */
function ddmmyyyy(day: string): string {
  const [y, m, d] = day.split('-');
  return `${d}/${m}/${y}`;
}

/** The command an action sends, and its options: a reminder is a NOTIFY with the spec's text. */
export function commandOf(row: PlanRow): { command: RawCommand; options: CommandOptions } {
  if (row.kind === 'PRE' || row.kind === 'DUE' || row.kind === 'POST') {
    const template = NOTIFY_TEMPLATE[row.kind];
    const { message } = notifyMessage(template, {
      name: row.customer_name,
      amount: formatAmount(Number(row.amount_minor ?? 0), row.currency),
      date: row.due_date ? ddmmyyyy(row.due_date) : '',
      currency: row.currency,
    });
    return { command: 'NOTIFY', options: { message, caseType: template } };
  }
  return { command: row.kind, options: {} };
}

export interface TakeContext {
  runId: number | null;
  date: string;
  version: number;
  policy: CollectionsPolicy;
  /** The payment that caused the action (the watcher), or 0 (the daily run). */
  triggerOf: (row: PlanRow) => number;
  /** commands.priority: 0 for the daily run (batch work), 2 for an unlock or release on payment. */
  priority: number;
  /** Record skipped items too (the daily run: why a device was not locked that day stays on record). */
  recordSkips: boolean;
  /** Write an audit row with each command (the watcher's few); the daily run audits itself once. */
  audit: boolean;
  record: Pick<RecordOptions, 'send' | 'oneShotTtlMs' | 'events'>;
}

export interface Taken {
  counts: PlanCounts;
  requests: CommandRequest[];
  outcomes: CommandOutcome[];
}

/**
 * Records the plan items not yet done as actions and sends their commands (see the top of this file).
 * Returns the counts of what this call recorded (an item recorded before counts nowhere) and the commands,
 * for the caller to publish after commit.
 */
export async function takeActions(
  trx: Transaction<DB>,
  rows: readonly PlanRow[],
  ctx: TakeContext,
): Promise<Taken> {
  const wanted = rows.filter((r) => !r.done && (ctx.recordSkips || r.skipped === null));
  const byKey = new Map<string, PlanRow>();
  const values: ActionValues[] = wanted.map((row) => {
    byKey.set(`${row.loan_id}:${row.kind}`, row);
    const state: CollectionActionState =
      row.skipped !== null
        ? 'SKIPPED'
        : row.kind === 'RELEASE' && ctx.policy.release === 'APPROVAL'
          ? 'AWAITING_APPROVAL'
          : 'ISSUED';
    return {
      run_id: ctx.runId,
      loan_id: Number(row.loan_id),
      imei1: row.imei,
      kind: row.kind,
      action_date: ctx.date,
      trigger_payment_id: ctx.triggerOf(row),
      version: ctx.version,
      rule: ruleText(ctx.version, row.kind, ctx.policy),
      state,
      skip_reason: row.skipped,
      due_date: row.due_date,
      amount_minor: row.amount_minor === null ? null : Number(row.amount_minor),
    };
  });
  const inserted = await insertActions(trx, values);
  const counts = countsOf(inserted.map((a) => ({ kind: a.kind, skipped: a.skip_reason })));
  const toSend = inserted.filter((a) => a.state === 'ISSUED');
  const requests: CommandRequest[] = toSend.map((action) => {
    const row = byKey.get(`${action.loan_id}:${action.kind}`) as PlanRow;
    const { command, options } = commandOf(row);
    const rule = ruleText(ctx.version, row.kind, ctx.policy);
    return {
      imei: action.imei1,
      command,
      options,
      iface: 'C',
      priority: ctx.priority,
      // The rule is the command's issuer: reports and the audit report show it as the command's user.
      issuer: { label: rule, userId: null, keyId: null },
      retailerPhone: null,
      batchId: null,
      audit: ctx.audit
        ? { address: null, details: { rule, loanRef: row.loan_ref, paymentId: ctx.triggerOf(row) || null } }
        : null,
    };
  });
  const outcomes = await recordCommandSet(trx, requests, { ...ctx.record, serverCommands: false });
  await setActionCommands(
    trx,
    toSend.map((action, index) => {
      const outcome = outcomes[index] as CommandOutcome;
      return outcome.recorded
        ? {
            id: action.id,
            state: 'ISSUED',
            note: null,
            commandId: outcome.id,
            transactionId: outcome.transactionId,
          }
        : { id: action.id, state: 'REFUSED', note: outcome.refusal, commandId: null, transactionId: null };
    }),
  );
  return { counts, requests, outcomes };
}
