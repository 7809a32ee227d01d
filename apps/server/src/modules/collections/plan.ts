/**
 * The plan and the actions it causes (README § Collections on autopilot). `planFor` is the one plan: the
 * dry run, Today's Plan, the daily run's chunks and the payment watcher all read it (repository.ts
 * `planRows`, one SQL statement). `takeActions` turns plan items into recorded actions and their commands,
 * in the caller's transaction, through the one command pipeline (commands/issue.ts `recordCommandSet`):
 * an action row and its command commit together, and an action already recorded for its device, day and
 * group (a run resumed after a crash) is not recorded again, so no reminder or lock goes out twice.
 */
import {
  COLLECTIONS_RETRY,
  type CollectionAction,
  type CollectionsPolicy,
  type CommandOptions,
  collectionsPolicySchema,
  DEFAULT_COLLECTIONS_POLICY,
  emptyPlanCounts,
  formatAmount,
  notifyMessage,
  type PlanCounts,
  type PlanItem,
  type RawCommand,
  ruleText,
} from '@lendlock/contract';
import type { Transaction } from 'kysely';
import type { CollectionActionState, DB } from '../../db/types';
import type { CommandOutcome, CommandRequest, RecordOptions } from '../commands/issue';
import { recordCommandSet } from '../commands/issue';
import {
  type ActionValues,
  currentPolicy,
  insertActions,
  type PlanRow,
  type PolicyVersionRow,
  setActionCommands,
} from './repository';

type Db = Parameters<typeof currentPolicy>[0];

export interface PolicyInForce {
  /** 0: the default, never saved (off). */
  version: number;
  policy: CollectionsPolicy;
  changedBy: string | null;
  changedAt: Date | null;
}

/** A stored policy as the contract reads it (a row that no longer parses counts as off). */
export function policyOf(row: PolicyVersionRow): CollectionsPolicy {
  const parsed = collectionsPolicySchema.safeParse(row.policy);
  return parsed.success ? parsed.data : { ...DEFAULT_COLLECTIONS_POLICY, enabled: false };
}

/** The policy in force: the latest version, or version 0 (the default, off). */
export async function policyInForce(db: Db): Promise<PolicyInForce> {
  const row = await currentPolicy(db);
  if (!row) return { version: 0, policy: DEFAULT_COLLECTIONS_POLICY, changedBy: null, changedAt: null };
  return {
    version: row.version,
    policy: policyOf(row),
    changedBy: row.created_by,
    changedAt: new Date(row.created_at),
  };
}

/** A plan row as the API shows it. */
export function toPlanItem(row: PlanRow, version: number | null, policy: CollectionsPolicy): PlanItem {
  return {
    loanId: Number(row.loan_id),
    loanRef: row.loan_ref,
    imei: row.imei,
    customerName: row.customer_name,
    retailerPhone: row.retailer_phone,
    action: row.kind,
    skipped: row.skipped,
    rule: ruleText(version, row.kind, policy),
    dueDate: row.due_date,
    amount: row.amount_minor === null ? null : formatAmount(Number(row.amount_minor), row.currency),
    currency: row.currency,
    daysOverdue: Number(row.days_overdue),
    done: row.done,
    failure:
      row.done_state === 'RETRYING' || row.done_state === 'FAILED'
        ? { state: row.done_state, attempts: Number(row.attempts ?? 1), of: COLLECTIONS_RETRY.maxAttempts }
        : null,
  };
}

/** Counts of plan items: taken per action, skipped per reason. */
export function countsOf(
  rows: readonly { kind: CollectionAction; skipped: string | null; n?: number }[],
): PlanCounts {
  const counts = emptyPlanCounts();
  for (const row of rows) {
    const n = row.n ?? 1;
    if (row.skipped === null) counts[row.kind] += n;
    else if (row.skipped in counts.skipped) counts.skipped[row.skipped as keyof PlanCounts['skipped']] += n;
  }
  return counts;
}

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
