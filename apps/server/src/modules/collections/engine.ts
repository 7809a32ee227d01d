/**
 * The collections engine's two workers (docs/features.md § Collections on autopilot; docs/operations.md §
 * Collections):
 *
 * - The daily run: once per lender's day, from the end of the quiet hours, one instance at a time (a
 *   lease on the day's `collection_runs` row, timed by the database's clock; an expired lease lets another
 *   instance take over). It walks the loans by id in chunks (keyset; the cursor is stored with each
 *   chunk's commit), each chunk in ONE transaction: plan (plan/repository.ts, the one plan) → actions → commands
 *   through the one pipeline. A crash resumes after the last committed chunk; a chunk's actions are unique
 *   per device, day and group, so nothing is sent twice. The kill switch is read in every chunk (and a
 *   chunk holds it shared: turning it on waits for the chunk, then cancels what it queued).
 * - The payment watcher: every few seconds, the payments after its durable cursor (and the last minute's,
 *   for late commits); for their loans, the plan's UNLOCK (arrears cleared on a device collections locked)
 *   and RELEASE (loan paid) go out at once, at single-command priority, quiet hours or not, and kill switch
 *   or not: they are relief (COLLECTION_RELIEF), which nothing that stops collections holds back.
 *
 * - The retry pass (with each look at the daily run): a LOCK, UNLOCK or RELEASE whose command failed on
 *   the device is sent again after a backoff, within its lender's day, while the plan still asks for it
 *   (COLLECTIONS_RETRY); each failed attempt is counted (`failed`), announced (collections.action.failed)
 *   and shown (the plan's `failure`, Device Details). A lock waits out quiet hours and the kill switch.
 *
 * The clock is injected (`now`): the tests run a month in minutes.
 */
import { randomBytes } from 'node:crypto';
import {
  addPlanCounts,
  COLLECTION_RELIEF,
  COLLECTIONS_RETRY,
  type CollectionAction,
  type CollectionsPolicy,
  emptyPlanCounts,
  lenderClock,
  type PlanCounts,
  runMaySend,
} from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import type { Counter } from 'prom-client';
import { PRIORITY_BULK, PRIORITY_SINGLE } from '../../db/priority';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { Poller } from '../../lib/poller';
import { appendAudit } from '../audit/repository';
import { type CommandOutcome, type CommandRequest, recordCommandSet } from '../commands/issue';
import type { CommandService } from '../commands/service';
import { actionFailedEvent, type EventSink } from '../webhooks/events';
import type { EventRecord } from '../webhooks/repository';
import { type Taken, takeActions } from './actions/take';
import { type UnsettledAction, unsettledActions, updateAction } from './failures/repository';
import { readControl } from './killswitch/repository';
import { planRows } from './plan/repository';
import { policyInForce } from './policy/service';
import {
  advanceRun,
  chunkUpperBound,
  ensureRun,
  findRun,
  finishRun,
  holdOverdueInstalments,
  lockRunIfLeased,
  releaseLease,
  stopStaleRuns,
  takeLease,
} from './runs/repository';
import { advancePaymentCursor, paymentsToWatch, takePaymentCursor } from './watcher/repository';

export const RUN_NOTES = {
  killSwitch: 'stopped by the kill switch',
  disabled: 'stopped: the policy was switched off',
  dayEnded: 'the lender’s day ended before the run finished',
} as const;

/** Why a failed action was given up without a further attempt (its `note`). */
export const RETRY_NOTES = {
  dayEnded: 'not retried: the lender’s day ended',
  notDue: (skipped: string | null) => `not retried: ${skipped ?? 'the plan no longer asks for it'}`,
} as const;

const IN_FLIGHT = new Set(['QUEUED', 'SENT', 'DELIVERED']);
/** Actions per transaction of the retry pass. */
const RETRY_PAGE = 500;

export interface EngineOptions {
  db: Kysely<DB>;
  commands: CommandService;
  log: FastifyBaseLogger;
  events: EventSink;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
  /** The engine's clock (tests inject one). */
  now?: () => Date;
  /** Loans per chunk of the daily run. */
  chunkSize?: number;
  /** How long a run's lease lasts without a chunk renewing it. */
  leaseMs?: number;
  /** How often the daily run is looked at (is it time, is it done). */
  runCheckMs?: number;
  /** How often the payment watcher polls. */
  watchMs?: number;
  /** This instance's name in the leases. */
  instanceId?: string;
  /** Called after each committed chunk (tests: a crash, or the kill switch, between two chunks). */
  afterChunk?: (chunk: number) => void | Promise<void>;
  /** Failed attempts of automated actions, by action (`lendlock_collections_failed_total`). */
  failed?: Pick<Counter<'action'>, 'inc'>;
}

export const DEFAULT_CHUNK_SIZE = 5_000;
export const DEFAULT_LEASE_MS = 60_000;

export interface RunOutcome {
  state: 'DONE' | 'STOPPED' | 'PAUSED' | 'BUSY' | 'NOT_DUE';
  counts: PlanCounts;
  chunks: number;
}

/** Records a failed action's `collections.action.failed` event (its attempts, whether given up, the next try). */
type Announce = (
  a: UnsettledAction,
  attempts: number,
  final: boolean,
  retryAt: Date | null,
  result: string | null,
) => void;

export class CollectionsEngine {
  readonly instanceId: string;
  private readonly now: () => Date;
  private readonly runPoller: Poller;
  private readonly watchPoller: Poller;
  private stopped = false;

  constructor(private readonly options: EngineOptions) {
    this.instanceId = options.instanceId ?? `collections-${randomBytes(6).toString('hex')}`;
    this.now = options.now ?? (() => new Date());
    this.runPoller = new Poller(async () => {
      try {
        await this.runDaily();
      } catch (error) {
        options.log.error({ err: error }, 'collections: daily run failed');
      }
      try {
        await this.retryFailed();
      } catch (error) {
        options.log.error({ err: error }, 'collections: retry pass failed');
      }
    }, options.runCheckMs ?? 30_000);
    this.watchPoller = new Poller(async () => {
      try {
        await this.watchPayments();
      } catch (error) {
        options.log.error({ err: error }, 'collections: payment watcher failed');
      }
    }, options.watchMs ?? 2_000);
  }

  start(): void {
    this.runPoller.start();
    this.watchPoller.start();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([this.runPoller.stop(), this.watchPoller.stop()]);
  }

  private recordOptions() {
    return {
      ...this.options.commands.recordOptions(true),
      ...(this.options.oneShotTtlMs !== undefined ? { oneShotTtlMs: this.options.oneShotTtlMs } : {}),
    };
  }

  private afterCommit(taken: Taken): void {
    if (taken.requests.length > 0) this.options.commands.afterCommit(taken.outcomes, taken.requests);
  }

  /**
   * The daily run, if it is due and not done: takes the lease and processes chunks until done, stopped (kill
   * switch, policy off), paused (quiet hours; the instance stops) or the lease is lost.
   */
  async runDaily(): Promise<RunOutcome> {
    const { db, log } = this.options;
    const none = (state: RunOutcome['state']): RunOutcome => ({
      state,
      counts: emptyPlanCounts(),
      chunks: 0,
    });
    let { version, policy } = await policyInForce(db);
    const now = this.now();
    const { date } = lenderClock(policy.timeZone, now);
    await stopStaleRuns(db, date, RUN_NOTES.dayEnded);
    const control = await readControl(db);
    if (!policy.enabled || control.kill_switch || !runMaySend(policy, now)) return none('NOT_DUE');
    if ((await findRun(db, date))?.state === 'DONE') return none('NOT_DUE');
    await ensureRun(db, date, version);
    const leaseMs = this.options.leaseMs ?? DEFAULT_LEASE_MS;
    const run = await takeLease(db, date, this.instanceId, leaseMs);
    if (!run) return none('BUSY');
    log.info({ date, cursor: run.cursor, resumes: run.resumes }, 'collections: daily run');
    let total = emptyPlanCounts();
    let chunks = 0;
    const chunkSize = this.options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    for (;;) {
      const at = this.now();
      if (this.stopped || lenderClock(policy.timeZone, at).date !== date || !runMaySend(policy, at)) {
        await releaseLease(db, run.id, this.instanceId);
        return { state: 'PAUSED', counts: total, chunks };
      }
      const outcome = await inTransaction(db, async (trx) => {
        // The kill switch first, shared (always before the run's row, as the kill switch takes them: no
        // deadlock): turning it on waits for this chunk, then cancels what it queued.
        if ((await readControl(trx, 'share')).kill_switch) return 'killed' as const;
        const lease = await lockRunIfLeased(trx, run.id, this.instanceId, leaseMs);
        if (!lease) return 'lost' as const;
        ({ version, policy } = await policyInForce(trx));
        if (!policy.enabled) return 'disabled' as const;
        const bound = await chunkUpperBound(trx, lease.cursor, chunkSize);
        if (!bound) return 'done' as const;
        if (policy.lockAfterDaysOverdue !== null)
          await holdOverdueInstalments(trx, lease.cursor, bound.upTo, date, policy.lockAfterDaysOverdue);
        const rows = await planRows(trx, {
          date,
          now: at,
          policy,
          killSwitch: false,
          retailerPhone: null,
          range: { kind: 'ids', after: lease.cursor, upTo: bound.upTo },
        });
        const taken = await takeActions(trx, rows, {
          runId: run.id,
          date,
          version,
          policy,
          triggerOf: () => 0,
          priority: PRIORITY_BULK,
          recordSkips: true,
          audit: false,
          record: this.recordOptions(),
        });
        await advanceRun(trx, run.id, {
          cursor: bound.upTo,
          processed: lease.processed + bound.loans,
          counts: addPlanCounts(countsOfRun(lease.counts), taken.counts),
        });
        return taken;
      });
      if (outcome === 'lost') return { state: 'BUSY', counts: total, chunks };
      if (outcome === 'killed' || outcome === 'disabled') {
        await finishRun(
          db,
          run.id,
          this.instanceId,
          'STOPPED',
          outcome === 'killed' ? RUN_NOTES.killSwitch : RUN_NOTES.disabled,
        );
        return { state: 'STOPPED', counts: total, chunks };
      }
      if (outcome === 'done') {
        if (await finishRun(db, run.id, this.instanceId, 'DONE', null)) {
          const finished = await findRun(db, date);
          await appendAudit(db, {
            actor: { label: `collections v${version}` },
            action: 'collections.run',
            target: `collections:${date}`,
            result: 'DONE',
            details: { date, processed: finished?.processed ?? null, counts: finished?.counts ?? null },
          });
        }
        return { state: 'DONE', counts: total, chunks };
      }
      chunks++;
      total = addPlanCounts(total, outcome.counts);
      this.afterCommit(outcome);
      await this.options.afterChunk?.(chunks);
      // Let requests in between chunks.
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * One pass of the payment watcher: unlocks and releases for the loans of new payments, whether the kill
   * switch is on or not (relief). Nothing while the policy is off (the cursor waits: the payments are
   * looked at once it is on). One transaction holds the watcher's cursor row (SKIP LOCKED): while another
   * instance's pass holds it, this one does nothing — two watchers never wait for each other, and the
   * watcher never locks the control row (the kill switch's, which the daily run's chunks hold shared).
   */
  async watchPayments(): Promise<number> {
    const { db } = this.options;
    const { version, policy } = await policyInForce(db);
    if (!policy.enabled) return 0;
    const now = this.now();
    const { date } = lenderClock(policy.timeZone, now);
    const taken = await inTransaction(db, async (trx) => {
      const cursor = await takePaymentCursor(trx);
      if (cursor === undefined) return null;
      const payments = await paymentsToWatch(trx, cursor, 500);
      if (payments.length === 0) return null;
      const latest = new Map<number, number>();
      for (const p of payments) latest.set(p.loan_id, Math.max(latest.get(p.loan_id) ?? 0, p.id));
      const rows = await planRows(trx, {
        date,
        now,
        policy,
        killSwitch: false,
        retailerPhone: null,
        range: { kind: 'loans', loanIds: [...latest.keys()] },
      });
      const result = await takeActions(
        trx,
        rows.filter((r) => r.kind === 'UNLOCK' || r.kind === 'RELEASE'),
        {
          runId: null,
          date,
          version,
          policy,
          triggerOf: (row) => latest.get(Number(row.loan_id)) ?? 0,
          priority: PRIORITY_SINGLE,
          recordSkips: false,
          audit: true,
          record: this.recordOptions(),
        },
      );
      await advancePaymentCursor(trx, Math.max(...payments.map((p) => p.id)));
      return result;
    });
    if (!taken) return 0;
    this.afterCommit(taken);
    return taken.requests.length;
  }

  /**
   * One retry pass (COLLECTIONS_RETRY): the day's LOCK, UNLOCK and RELEASE actions whose command failed.
   * A failure seen for the first time is counted and announced, and the action is RETRYING (its next
   * attempt due after the backoff) or FAILED (every attempt made, or its day is over). A retry due goes
   * out if the plan — planned as if nothing were recorded that day — still asks for the same action, not
   * skipped; otherwise the action is FAILED with why. A lock waits while the kill switch is on or in quiet
   * hours (relief does not); nothing goes out while the policy is off. Returns the attempts sent.
   */
  async retryFailed(): Promise<number> {
    const { policy } = await policyInForce(this.options.db);
    const now = this.now();
    let sent = 0;
    // Page by page (by action id), each page in its own transaction.
    for (let after = 0; ; ) {
      const page = await this.retryPage(policy, now, after);
      sent += page.sent;
      if (page.last === null) return sent;
      after = page.last;
    }
  }

  /** One page of the retry pass: up to RETRY_PAGE actions after `after`; `last`: null when none was left. */
  private async retryPage(
    policy: CollectionsPolicy,
    now: Date,
    after: number,
  ): Promise<{ sent: number; last: number | null }> {
    const { db, events } = this.options;
    const { date } = lenderClock(policy.timeZone, now);
    const failedKinds: CollectionAction[] = [];
    const done = await inTransaction(db, async (trx) => {
      const actions = await unsettledActions(trx, { date, now, after, limit: RETRY_PAGE });
      const records: EventRecord[] = [];
      const announce: Announce = (a, attempts, final, retryAt, result) =>
        records.push(
          actionFailedEvent({
            id: a.id,
            imei1: a.imei1,
            kind: a.kind,
            loanRef: a.loan_ref,
            rule: a.rule,
            actionDate: a.action_date,
            attempts,
            maxAttempts: COLLECTIONS_RETRY.maxAttempts,
            final,
            retryAt,
            transactionId: a.transaction_id,
            result,
          }),
        );
      const due: UnsettledAction[] = [];
      for (const a of actions) {
        if (a.command_status === 'EXECUTED') {
          // A retry went through.
          await updateAction(trx, a.id, { state: 'ISSUED', retryAt: null });
        } else if (IN_FLIGHT.has(a.command_status)) {
          // An attempt still on its way.
        } else if (a.command_status !== 'FAILED') {
          // A retry cancelled (by an operator, or the kill switch) or expired: given up, not sent again.
          const note = RETRY_NOTES.notDue(a.command_result ?? a.command_status);
          await updateAction(trx, a.id, { state: 'FAILED', retryAt: null, note });
          announce(a, a.attempts, true, null, note);
        } else if (a.state === 'ISSUED' || a.retry_at === null) {
          // An attempt failed on the device: counted, announced, and retried after the backoff.
          const final = a.action_date !== date || a.attempts >= COLLECTIONS_RETRY.maxAttempts;
          const wait = COLLECTIONS_RETRY.backoffMinutes[a.attempts - 1] ?? 0;
          const retryAt = final ? null : new Date(now.getTime() + wait * 60_000);
          const result = a.command_result ?? a.command_status;
          await updateAction(trx, a.id, { state: final ? 'FAILED' : 'RETRYING', retryAt, note: result });
          failedKinds.push(a.kind);
          announce(a, a.attempts, final, retryAt, result);
        } else if (a.action_date !== date) {
          await updateAction(trx, a.id, { state: 'FAILED', retryAt: null, note: RETRY_NOTES.dayEnded });
          announce(a, a.attempts, true, null, RETRY_NOTES.dayEnded);
        } else if (a.retry_at.getTime() <= now.getTime()) {
          due.push(a);
        }
      }
      const retries = await this.retry(trx, due, { date, now, policy, announce });
      if (records.length > 0) await events.emit(trx, records);
      const last = actions.length < RETRY_PAGE ? null : (actions.at(-1)?.id ?? null);
      return { ...retries, events: records.length, last };
    });
    for (const kind of failedKinds) this.options.failed?.inc({ action: kind });
    if (done.events > 0) events.wake();
    if (done.requests.length > 0) this.options.commands.afterCommit(done.outcomes, done.requests);
    return { sent: done.outcomes.filter((o) => o.recorded).length, last: done.last };
  }

  /** The retries due: sent again if the plan still asks for them, given up if not, or left to wait. */
  private async retry(
    trx: Transaction<DB>,
    due: readonly UnsettledAction[],
    ctx: {
      date: string;
      now: Date;
      policy: CollectionsPolicy;
      announce: Announce;
    },
  ): Promise<{ requests: CommandRequest[]; outcomes: CommandOutcome[] }> {
    const { date, now, policy } = ctx;
    if (due.length === 0 || !policy.enabled) return { requests: [], outcomes: [] };
    // The kill switch shared, as a chunk holds it: turning it on waits for this pass, then cancels the
    // locks it queued (no lock recorded beside a kill switch the pass did not see).
    const control = await readControl(trx, 'share');
    const harmWaits = control.kill_switch || !runMaySend(policy, now);
    const ready = due.filter((a) => !harmWaits || (COLLECTION_RELIEF as readonly string[]).includes(a.kind));
    if (ready.length === 0) return { requests: [], outcomes: [] };
    const rows = await planRows(trx, {
      date,
      now,
      policy,
      killSwitch: control.kill_switch,
      retailerPhone: null,
      range: { kind: 'loans', loanIds: [...new Set(ready.map((a) => a.loan_id))] },
      ignoreToday: true,
    });
    const sending: UnsettledAction[] = [];
    for (const a of ready) {
      const item = rows.find((r) => Number(r.loan_id) === a.loan_id && r.kind === a.kind);
      if (item && item.skipped === null) sending.push(a);
      else {
        const note = RETRY_NOTES.notDue(item?.skipped ?? null);
        await updateAction(trx, a.id, { state: 'FAILED', retryAt: null, note });
        ctx.announce(a, a.attempts, true, null, note);
      }
    }
    const requests: CommandRequest[] = sending.map((a) => ({
      imei: a.imei1,
      command: a.kind as 'LOCK',
      options: {},
      iface: 'C',
      priority: PRIORITY_SINGLE,
      issuer: { label: a.rule, userId: null, keyId: null },
      retailerPhone: null,
      batchId: null,
      audit: {
        address: null,
        details: { rule: a.rule, loanRef: a.loan_ref, attempt: a.attempts + 1, retryOf: a.transaction_id },
      },
    }));
    const outcomes = await recordCommandSet(trx, requests, {
      ...this.recordOptions(),
      serverCommands: false,
    });
    for (const [index, a] of sending.entries()) {
      const outcome = outcomes[index] as CommandOutcome;
      if (outcome.recorded) {
        await updateAction(trx, a.id, {
          attempts: a.attempts + 1,
          retryAt: null,
          commandId: outcome.id,
          transactionId: outcome.transactionId,
        });
      } else {
        const note = RETRY_NOTES.notDue(outcome.refusal);
        await updateAction(trx, a.id, { state: 'FAILED', retryAt: null, note });
        ctx.announce(a, a.attempts, true, null, note);
      }
    }
    return { requests, outcomes };
  }
}

/** A run's stored counts (jsonb) as counts. */
export function countsOfRun(stored: unknown): PlanCounts {
  const counts = stored as Partial<PlanCounts> | null;
  return addPlanCounts(emptyPlanCounts(), {
    ...emptyPlanCounts(),
    ...(counts ?? {}),
    skipped: { ...emptyPlanCounts().skipped, ...(counts?.skipped ?? {}) },
  });
}
