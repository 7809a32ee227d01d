/**
 * Collections on autopilot, the API's side (README § Collections on autopilot): the policy and its
 * versions (SUPERADMIN edits), the plan (dry run, Today's Plan, its CSV), the kill switch (anyone of the
 * lender's ADMINs stops, only a SUPERADMIN resumes), per-device holds and the release approval queue
 * (retailer-scoped), and the daily runs. Every change is audited. Every method asks the authority module
 * (authz/resources/collections.ts): only the lender steers the policy, the kill switch and the runs, which
 * govern every tenant; a hold, a release or a device's failures of another tenant is not found.
 */
import { Readable } from 'node:stream';
import {
  COLLECTIONS_MESSAGES,
  COLLECTIONS_RETRY,
  type CollectionsPolicy,
  type CollectionsPolicyVersion,
  type CollectionsRun,
  CSV_BOM,
  type FailedAction,
  type Hold,
  type KillSwitch,
  lenderClock,
  type PlanItem,
  type PlanResponse,
  type PolicyChange,
  planCsvText,
  policyChanges,
  type ReleaseRequest,
  type ReleaseState,
  runStartTime,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, may, mayIfFound, scopeFor } from '../../authz';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { PRIORITY_SINGLE } from '../../db/priority';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import { recomputeDesired } from '../commands/desired';
import { recordCommandSet } from '../commands/issue';
import type { CommandService } from '../commands/service';
import { devicesByEitherImei, findDevice } from '../devices/repository';
import { loanStatus } from '../loans/repository';
import { commandEvents, type EventSink } from '../webhooks/events';
import { countsOfRun } from './engine';
import { countsOf, policyInForce, policyOf, toPlanItem } from './plan';
import {
  cancelQueuedCollections,
  decideRelease,
  deleteHold,
  deviceFailures,
  findRelease,
  type HoldRow,
  insertPolicy,
  listHolds,
  listReleases,
  lockRelease,
  type PlanParams,
  planCounts,
  planRows,
  policyVersions,
  type ReleaseRow,
  readControl,
  recentRuns,
  setKillSwitch,
  stopRunningRuns,
  upsertHold,
} from './repository';

export interface CollectionsServiceOptions {
  db: Kysely<DB>;
  commands: CommandService;
  events: EventSink;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
  /** The engine's clock: "today" of the plan. */
  now: () => Date;
}

interface Caller {
  actor: Principal;
  address: string;
}

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

function holdView(row: HoldRow): Hold {
  return {
    imei: row.imei1,
    reason: row.reason,
    heldBy: row.held_by,
    heldAt: new Date(row.held_at).toISOString(),
    retailerPhone: row.retailer_phone,
  };
}

function releaseView(row: ReleaseRow): ReleaseRequest {
  return {
    id: Number(row.id),
    loanId: Number(row.loan_id),
    loanRef: row.loan_ref,
    imei: row.imei1,
    customerName: row.customer_name,
    retailerPhone: row.retailer_phone,
    paidAt: iso(row.paid_at),
    queuedAt: new Date(row.created_at).toISOString(),
    // Only decided or waiting releases are read here (an automatic one has no API state).
    state: row.release_state ?? 'APPROVED',
    decidedBy: row.decided_by,
    decidedAt: iso(row.decided_at),
    transactionId: row.transaction_id,
  };
}

/** A page's cursor: `{loanId}.{group}` of the last item. */
function parseCursor(cursor: string | undefined): { loanId: number; ord: number } | undefined {
  if (cursor === undefined) return undefined;
  const match = /^(\d{1,15})\.([1-4])$/.exec(cursor);
  if (!match) throw badRequest(COLLECTIONS_MESSAGES.badCursor);
  return { loanId: Number(match[1]), ord: Number(match[2]) };
}

/** Rows per read of the plan's CSV. */
const EXPORT_PAGE = 5_000;

export class CollectionsService {
  constructor(private readonly options: CollectionsServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  // ---- Policy ----

  async policy(actor: Principal): Promise<CollectionsPolicyVersion> {
    authorize(actor, 'collections', 'view', 'policy', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    const current = await policyInForce(this.db);
    return {
      version: current.version,
      policy: await this.asSeenBy(actor, current.policy),
      changedBy: current.changedBy,
      changedAt: iso(current.changedAt),
    };
  }

  /** A new version of the policy (SUPERADMIN); the same policy again saves nothing. */
  async savePolicy(
    { actor, address }: Caller,
    policy: CollectionsPolicy,
  ): Promise<CollectionsPolicyVersion & { changed: boolean }> {
    const refusal = !may(actor, 'collections', 'steer', 'policy')
      ? COLLECTIONS_MESSAGES.policyRetailer
      : !may(actor, 'collections', 'savePolicy', 'policy')
        ? COLLECTIONS_MESSAGES.superadminOnly
        : null;
    if (refusal) {
      await appendAudit(this.db, {
        actor,
        action: 'collections.policy',
        target: 'collections:policy',
        address,
        result: 'REFUSED',
        details: { reason: refusal },
      });
      throw forbidden(refusal);
    }
    return inTransaction(this.db, async (trx) => {
      // The control row, locked: saves are numbered one after the other.
      await readControl(trx, 'update');
      const current = await policyInForce(trx);
      const changes = policyChanges(current.version === 0 ? null : current.policy, policy);
      if (current.version > 0 && changes.length === 0)
        return {
          version: current.version,
          policy: current.policy,
          changedBy: current.changedBy,
          changedAt: iso(current.changedAt),
          changed: false,
        };
      const row = await insertPolicy(trx, {
        version: current.version + 1,
        policy,
        createdBy: actor.email,
        userId: actor.userId,
      });
      await appendAudit(trx, {
        actor,
        action: 'collections.policy',
        target: 'collections:policy',
        address,
        result: `v${row.version}`,
        details: { version: row.version, changes },
      });
      return {
        version: row.version,
        policy: policyOf(row),
        changedBy: row.created_by,
        changedAt: iso(row.created_at),
        changed: true,
      };
    });
  }

  /** Every version, newest first, each with what it changed from the one before. */
  async versions(actor: Principal): Promise<(CollectionsPolicyVersion & { changes: PolicyChange[] })[]> {
    authorize(actor, 'collections', 'view', 'policy', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    const rows = await policyVersions(this.db, 1000);
    const seen = await Promise.all(rows.map((row) => this.asSeenBy(actor, policyOf(row))));
    return rows.map((row, index) => {
      const before = seen[index + 1];
      const policy = seen[index] as CollectionsPolicy;
      return {
        version: row.version,
        policy,
        changedBy: row.created_by,
        changedAt: iso(row.created_at),
        changes: policyChanges(before ?? null, policy),
      };
    });
  }

  /**
   * The policy as `actor` may see it: a retailer's user sees the exclusions of its own retailer and
   * devices only (another tenant's IMEIs and phones are theirs), the lender's users all of it.
   */
  private async asSeenBy(actor: Principal, policy: CollectionsPolicy): Promise<CollectionsPolicy> {
    const scope = scopeFor(actor, 'collections');
    if (scope.retailerPhone === null) return policy;
    const own = await devicesByEitherImei(this.db, policy.excludedImeis, scope);
    const ownImeis = new Set(own.flatMap((d) => [d.imei1, d.imei2]));
    return {
      ...policy,
      excludedImeis: policy.excludedImeis.filter((imei) => ownImeis.has(imei)),
      excludedRetailers: policy.excludedRetailers.filter((phone) => phone === scope.retailerPhone),
    };
  }

  // ---- The plan ----

  private async planParams(
    actor: Principal,
    request: { date?: string | undefined; policy?: CollectionsPolicy | undefined },
  ): Promise<{ params: Omit<PlanParams, 'range'>; version: number | null }> {
    const current = await policyInForce(this.db);
    const policy = request.policy ?? current.policy;
    const control = await readControl(this.db);
    return {
      version: request.policy ? null : current.version,
      params: {
        date: request.date ?? lenderClock(policy.timeZone, this.options.now()).date,
        now: this.options.now(),
        policy,
        killSwitch: control.kill_switch,
        // The plan (and a dry run of another policy) shows the caller's tenant's loans only.
        retailerPhone: scopeFor(actor, 'collections').retailerPhone,
      },
    };
  }

  /** What the policy (saved, or `policy`) does on a day: counts (first page only) and a page of items. */
  async plan(
    actor: Principal,
    request: {
      date?: string | undefined;
      policy?: CollectionsPolicy | undefined;
      filter: PlanParams['filter'];
      limit: number;
      cursor?: string | undefined;
    },
  ): Promise<Omit<PlanResponse, 'status'>> {
    const after = parseCursor(request.cursor);
    const { params, version } = await this.planParams(actor, request);
    // In a transaction: the plan's statements run without JIT compilation (repository.ts).
    const { rows, counted } = await inTransaction(this.db, async (trx) => ({
      rows: await planRows(trx, {
        ...params,
        filter: request.filter,
        range: { kind: 'all', ...(after ? { after } : {}) },
        limit: request.limit + 1,
      }),
      counted: await planCounts(trx, { ...params, range: { kind: 'all' } }),
    }));
    const page = rows.slice(0, request.limit);
    const last = page.at(-1);
    const counts = countsOf(counted);
    return {
      date: params.date,
      timeZone: params.policy.timeZone,
      version,
      killSwitch: params.killSwitch,
      runsAt: runStartTime(params.policy),
      counts,
      items: page.map((row) => toPlanItem(row, version, params.policy)),
      cursor: rows.length > request.limit && last ? `${last.loan_id}.${last.ord}` : null,
    };
  }

  /** The whole plan as CSV (UTF-8 with the BOM), read page by page as the client takes it. */
  async planCsv(
    actor: Principal,
    request: {
      date?: string | undefined;
      policy?: CollectionsPolicy | undefined;
      filter: PlanParams['filter'];
    },
  ): Promise<{ date: string; stream: Readable }> {
    const { params, version } = await this.planParams(actor, request);
    const db = this.db;
    async function* lines(): AsyncGenerator<string> {
      yield `${CSV_BOM}${await planCsvText([], { header: true })}`;
      let after: { loanId: number; ord: number } | undefined;
      for (;;) {
        const page = after;
        const rows = await inTransaction(db, (trx) =>
          planRows(trx, {
            ...params,
            filter: request.filter,
            range: { kind: 'all', ...(page ? { after: page } : {}) },
            limit: EXPORT_PAGE,
          }),
        );
        if (rows.length === 0) return;
        const items: PlanItem[] = rows.map((row) => toPlanItem(row, version, params.policy));
        yield `\r\n${await planCsvText(items, { header: false })}`;
        if (rows.length < EXPORT_PAGE) return;
        const last = rows.at(-1) as (typeof rows)[number];
        after = { loanId: Number(last.loan_id), ord: last.ord };
      }
    }
    return { date: params.date, stream: Readable.from(lines(), { objectMode: false }) };
  }

  // ---- Kill switch ----

  async killSwitch(actor: Principal): Promise<KillSwitch> {
    authorize(actor, 'collections', 'view', 'killSwitch', () =>
      forbidden(COLLECTIONS_MESSAGES.killSwitchRetailer),
    );
    const control = await readControl(this.db);
    return {
      on: control.kill_switch,
      reason: control.kill_reason,
      changedBy: control.kill_changed_by,
      changedAt: iso(control.kill_changed_at),
    };
  }

  /**
   * Turns the kill switch on (any ADMIN or SUPERADMIN of the lender: stopping is always allowed) or off
   * (SUPERADMIN only). On: the running daily run stops after its chunk under way, and every automated
   * reminder and lock still QUEUED is cancelled ('collections stopped'), with its webhook event; a queued
   * unlock or release (relief) stays queued.
   */
  async setKillSwitch(
    { actor, address }: Caller,
    request: { on: boolean; reason: string },
  ): Promise<KillSwitch & { cancelled: number; message: string }> {
    const refusal = !may(actor, 'collections', 'steer', 'killSwitch')
      ? COLLECTIONS_MESSAGES.killSwitchRetailer
      : !request.on && !may(actor, 'collections', 'resume', 'killSwitch')
        ? COLLECTIONS_MESSAGES.killSwitchOffSuperadmin
        : null;
    if (refusal) {
      await appendAudit(this.db, {
        actor,
        action: 'collections.killswitch',
        target: 'collections:killswitch',
        address,
        result: 'REFUSED',
        details: { on: request.on, reason: request.reason, refusal },
      });
      throw forbidden(refusal);
    }
    const { events } = this.options;
    const result = await inTransaction(this.db, async (trx) => {
      const before = await readControl(trx, 'update');
      if (before.kill_switch === request.on)
        throw new AppError(409, 'CONFLICT', COLLECTIONS_MESSAGES.killSwitchSame(request.on));
      const control = await setKillSwitch(trx, {
        on: request.on,
        reason: request.reason,
        changedBy: actor.email,
      });
      let cancelled = 0;
      if (request.on) {
        await stopRunningRuns(trx, 'stopped by the kill switch');
        const rows = await cancelQueuedCollections(trx, COLLECTIONS_MESSAGES.stopped);
        cancelled = rows.length;
        for (const row of rows)
          if (row.command !== 'NOTIFY') await recomputeDesired(trx, row.imei1, row.command as 'LOCK');
        await events.emit(trx, commandEvents(rows));
      }
      await appendAudit(trx, {
        actor,
        action: 'collections.killswitch',
        target: 'collections:killswitch',
        address,
        result: request.on ? 'ON' : 'OFF',
        details: { on: request.on, reason: request.reason, cancelled },
      });
      return { control, cancelled };
    });
    if (result.cancelled > 0) events.wake();
    return {
      on: result.control.kill_switch,
      reason: result.control.kill_reason,
      changedBy: result.control.kill_changed_by,
      changedAt: iso(result.control.kill_changed_at),
      cancelled: result.cancelled,
      message: request.on ? COLLECTIONS_MESSAGES.killSwitchOn : COLLECTIONS_MESSAGES.killSwitchOff,
    };
  }

  // ---- Holds ----

  /** A device the caller may hold (either IMEI), or 404: another retailer's device is not revealed. */
  private async deviceFor(actor: Principal, imei: string) {
    const device = await findDevice(this.db, imei);
    const unknown = () => notFound(COLLECTIONS_MESSAGES.deviceNotFound);
    if (!device) throw unknown();
    authorize(actor, 'collections', 'hold', { retailerPhone: device.retailer_phone }, unknown);
    return device;
  }

  /** A device whose holds, releases or failures the caller may read (either IMEI), or null: none shown. */
  private async readableDevice(actor: Principal, imei: string) {
    const device = await findDevice(this.db, imei);
    if (!mayIfFound(actor, 'collections', 'read', device, (x) => ({ retailerPhone: x.retailer_phone })))
      return null;
    return device;
  }

  async holds(actor: Principal, imei?: string): Promise<Hold[]> {
    const scope = scopeFor(actor, 'collections');
    if (imei !== undefined) {
      const device = await this.readableDevice(actor, imei);
      if (!device) return [];
      const rows = await listHolds(this.db, scope);
      return rows.filter((row) => row.imei1 === device.imei1).map(holdView);
    }
    return (await listHolds(this.db, scope)).map(holdView);
  }

  async hold({ actor, address }: Caller, imei: string, reason: string): Promise<Hold> {
    const device = await this.deviceFor(actor, imei);
    const row = await inTransaction(this.db, async (trx) => {
      const hold = await upsertHold(trx, {
        imei1: device.imei1,
        reason,
        heldBy: actor.email,
        userId: actor.userId,
      });
      await appendAudit(trx, {
        actor,
        action: 'collections.hold',
        target: device.imei1,
        address,
        result: 'HELD',
        details: { reason },
      });
      return hold;
    });
    return holdView({ ...row, retailer_phone: device.retailer_phone });
  }

  async unhold({ actor, address }: Caller, imei: string): Promise<void> {
    const device = await this.deviceFor(actor, imei);
    await inTransaction(this.db, async (trx) => {
      const removed = await deleteHold(trx, device.imei1);
      if (!removed) throw notFound(COLLECTIONS_MESSAGES.holdNotFound);
      await appendAudit(trx, {
        actor,
        action: 'collections.hold',
        target: device.imei1,
        address,
        result: 'RELEASED',
        details: { reason: removed.reason, heldBy: removed.held_by },
      });
    });
  }

  // ---- Release approvals ----

  async releases(actor: Principal, state: ReleaseState, imei?: string): Promise<ReleaseRequest[]> {
    const scope = scopeFor(actor, 'collections');
    let imei1: string | null = null;
    if (imei !== undefined) {
      const device = await this.readableDevice(actor, imei);
      if (!device) return [];
      imei1 = device.imei1;
    }
    return (await listReleases(this.db, state, scope, imei1)).map(releaseView);
  }

  /**
   * Approves (the RELEASE goes out through the one pipeline, the rule and the approver as its user) or
   * rejects a release awaiting approval, kill switch or not: a release is relief (COLLECTION_RELIEF).
   */
  async decide(
    { actor, address }: Caller,
    id: number,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<ReleaseRequest> {
    const { commands } = this.options;
    const outcome = await inTransaction(this.db, async (trx) => {
      const row = await lockRelease(trx, id);
      const unknown = () => notFound(COLLECTIONS_MESSAGES.releaseNotFound);
      if (!row) throw unknown();
      authorize(actor, 'collections', 'decide', { retailerPhone: row.retailer_phone }, unknown);
      if (row.state !== 'AWAITING_APPROVAL') throw conflict(COLLECTIONS_MESSAGES.releaseDecided);
      const audit = (result: string, details: Record<string, unknown>) =>
        appendAudit(trx, {
          actor,
          action: `collections.release.${decision}`,
          target: row.imei1,
          address,
          result,
          details: {
            actionId: id,
            loanRef: row.loan_ref,
            rule: row.rule,
            reason: reason ?? null,
            ...details,
          },
        });
      const decided = { decidedBy: actor.email, userId: actor.userId };
      if (decision === 'reject') {
        await decideRelease(trx, id, {
          ...decided,
          state: 'REJECTED',
          note: reason ?? null,
          commandId: null,
          transactionId: null,
        });
        await audit('REJECTED', {});
        return { refusal: null, requests: [], outcomes: [] };
      }
      // A payment reversed since it was queued: the loan is no longer paid.
      if ((await loanStatus(trx, row.loan_id)) !== 'PAID')
        throw conflict(COLLECTIONS_MESSAGES.releaseNotPaid);
      const requests = [
        {
          imei: row.imei1,
          command: 'RELEASE' as const,
          options: {},
          iface: 'C' as const,
          priority: PRIORITY_SINGLE,
          issuer: {
            label: `${row.rule}, approved by ${actor.email}`,
            userId: actor.userId,
            keyId: actor.keyId ?? null,
          },
          retailerPhone: actor.retailerPhone,
          batchId: null,
          audit: null,
        },
      ];
      const outcomes = await recordCommandSet(trx, requests, {
        ...commands.recordOptions(true),
        ...(this.options.oneShotTtlMs !== undefined ? { oneShotTtlMs: this.options.oneShotTtlMs } : {}),
        serverCommands: false,
      });
      const [recorded] = outcomes;
      if (!recorded?.recorded) {
        const refusal = recorded?.refusal ?? 'not registered';
        await decideRelease(trx, id, {
          ...decided,
          state: 'REFUSED',
          note: refusal,
          commandId: null,
          transactionId: null,
        });
        await audit('REFUSED', { refusal });
        return { refusal, requests: [], outcomes: [] };
      }
      await decideRelease(trx, id, {
        ...decided,
        state: 'ISSUED',
        note: reason ?? null,
        commandId: recorded.id,
        transactionId: recorded.transactionId,
      });
      await audit('APPROVED', { transactionId: recorded.transactionId });
      return { refusal: null, requests, outcomes };
    });
    if (outcome.refusal) throw conflict(COLLECTIONS_MESSAGES.releaseRefused(outcome.refusal));
    if (outcome.requests.length > 0) commands.afterCommit(outcome.outcomes, outcome.requests);
    // Read back by id: the decision just committed, whatever else is queued or decided.
    const view = await findRelease(this.db, id);
    if (!view) throw notFound(COLLECTIONS_MESSAGES.releaseNotFound);
    return releaseView(view);
  }

  // ---- Failed automated actions (Device Details) ----

  /** A device's automated actions retrying or given up; another retailer's device: none. */
  async failures(actor: Principal, imei: string): Promise<FailedAction[]> {
    const device = await this.readableDevice(actor, imei);
    if (!device) return [];
    return (await deviceFailures(this.db, device.imei1, 50)).map((row) => ({
      id: row.id,
      imei: row.imei1,
      loanRef: row.loan_ref,
      action: row.kind,
      rule: row.rule,
      actionDate: row.action_date,
      state: row.state,
      attempts: Number(row.attempts),
      maxAttempts: COLLECTIONS_RETRY.maxAttempts,
      retryAt: iso(row.retry_at),
      result: row.note ?? row.command_result,
      transactionId: row.transaction_id,
    }));
  }

  // ---- Runs ----

  async runs(actor: Principal): Promise<CollectionsRun[]> {
    authorize(actor, 'collections', 'view', 'run', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    return (await recentRuns(this.db, 30)).map((run) => ({
      id: run.id,
      runDate: run.run_date,
      version: run.version,
      state: run.state,
      startedAt: new Date(run.started_at).toISOString(),
      finishedAt: iso(run.finished_at),
      processed: run.processed,
      counts: countsOfRun(run.counts),
      resumes: run.resumes,
    }));
  }
}
