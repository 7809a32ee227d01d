/**
 * Durable server-side batches (design.md §3.3): a batch and its rows are stored at upload; workers on every
 * instance process them in chunks (1 % of the batch, 50 to 500 rows: chunk.ts, `chunkSizeFor`) and keep
 * the progress (last IMEI, counts) in the batch row. Device action ALL is a batch too, without a file. A
 * batch whose lease lapsed (its server crashed or stopped) is not picked up again by another instance on
 * its own: the console shows it as an incomplete batch that the operator resumes (Process) or discards
 * (New Batch), as spec §4.4 describes. The instance that held the lease takes it up
 * again (its lease may lapse while the database is out of reach).
 */

import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Readable } from 'node:stream';
import {
  type BatchKind,
  batchKindOf,
  type CommandInterface,
  type CommandOptions,
  type CommandStatus,
  MESSAGES,
  type RawCommand,
} from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { authorize, may, scopeFor } from '../../authz';
import { issuerLevel } from '../../authz/issuer';
import type { BatchObject } from '../../authz/resources/batches';
import { type AppError, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { asSystem } from '../../db/tenant';
import { inTransaction } from '../../db/transaction';
import type { BatchItemRow, BatchRow, DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import { countBatchCommandsByStatus } from '../commands/repository';
import type { CommandService } from '../commands/service';
import { batchCompletedEvent, type EventSink, NO_EVENTS } from '../webhooks/events';
import { chunkSizeFor, MAX_CHUNK_SIZE, processChunk } from './chunk';
import {
  type BatchWithOwner,
  completeIfNoChunks,
  discardBatch,
  findBatch,
  findBatchWithOwner,
  findClientBatch,
  findCurrentBatch,
  type ItemSelection,
  insertAllDevicesRows,
  insertBatch,
  insertChunkRows,
  insertClientBatch,
  leaseNextBatch,
  listBatchItems,
  listVisibleBatches,
  lockStanding,
  pauseBatch,
  pauseBatchesWhere,
  pauseForStanding,
  releaseBatch,
  resumeBatch,
  updateClientBatch,
} from './repository';
import { resultsCsvStream, selectionTotal } from './results';

export interface BatchRowInput {
  imei: string;
  name?: string;
  amount?: string;
  date?: string;
  template?: string;
  header?: string;
  message?: string;
}

export interface NewBatch {
  feature: string;
  command: RawCommand;
  options: CommandOptions;
  fileName: string | null;
  storedFile: string | null;
  iface: CommandInterface;
  actor: Principal;
  address: string;
  total: number;
  invalid: number;
}

export type BatchPhase = 'running' | 'paused' | 'interrupted' | 'complete' | 'cancelled';

/** How long a worker's claim on a batch lasts without renewal (renewed after every chunk). */
export const LEASE_MS = 15_000;
const INSERT_ROWS = 10_000;

export function batchPhase(
  batch: Pick<BatchRow, 'status' | 'paused' | 'lease_until' | 'lease_owner'>,
  now = Date.now(),
): BatchPhase {
  if (batch.status === 'complete') return 'complete';
  if (batch.status === 'cancelled') return 'cancelled';
  if (batch.paused) return 'paused';
  if (batch.lease_owner === null) return 'running'; // waiting for its first worker
  return batch.lease_until && new Date(batch.lease_until).getTime() > now ? 'running' : 'interrupted';
}

export interface BatchRunnerOptions {
  db: Kysely<DB>;
  commands: CommandService;
  log: FastifyBaseLogger;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
  /** Workers of this instance (several share one batch through SKIP LOCKED). */
  workers?: number;
  /** Rows per chunk (one transaction each), set when a batch is stored; by default `chunkSizeFor` its size. */
  chunkSize?: number;
  pollMs?: number;
  /** Webhook events (batch.completed). */
  events?: EventSink;
}

/** The reasons shown on the resume card and in the Reports history when the server pauses a batch. */
export const BATCH_PAUSE_REASONS = {
  ownerDisabled: "Paused: the owner's account was disabled.",
  keyDeactivated: 'Paused: the API key that started it was deactivated.',
} as const;

export const BATCH_AUTHORITY_MESSAGES = {
  noSuchBatch: 'No such batch',
  notYours: 'This batch belongs to another user: only its owner or a higher level can see or control it.',
} as const;

export type BatchControl = 'pause' | 'resume' | 'cancel';

const ownerLevel = (batch: BatchWithOwner) => issuerLevel(batch.user_id, batch.owner_level);

/** What the batch policy decides on (authz/resources/batches.ts). */
export function batchObject(
  batch: Pick<BatchWithOwner, 'command' | 'user_id' | 'owner_level' | 'owner_retailer_phone'>,
): BatchObject {
  return {
    raw: batch.command,
    owner: { userId: batch.user_id, level: batch.owner_level, retailerPhone: batch.owner_retailer_phone },
  };
}

/**
 * Why `actor` may not `action` `batch` (authz/resources/batches.ts), or null: another tenant's batch is
 * unknown, as one that does not exist; without its command's permission, unauthorised; else it is
 * another's.
 */
function batchRefusal(actor: Principal, action: 'read' | 'control', object: BatchObject): AppError | null {
  if (may(actor, 'batches', action, object)) return null;
  if (!may(actor, 'batches', 'see', object)) return notFound(BATCH_AUTHORITY_MESSAGES.noSuchBatch);
  if (!may(actor, 'batches', 'use', object)) return forbidden(MESSAGES.unauthorised);
  return forbidden(BATCH_AUTHORITY_MESSAGES.notYours);
}

/**
 * Pauses at once, with `reason`, every incomplete batch of a user whose account is being disabled
 * (`{userId}`) or of an API key being deactivated (`{keyId}`): for the disable and deactivate paths, in
 * their own transaction (pass it as `db`), so the pause commits with the change of standing. The batch
 * worker checks the same standing under lock before every chunk (BatchService.step), so no chunk commits
 * commands after the change even when this call is missed. Each paused batch gets an audit row.
 */
export async function pauseBatchesOf(
  db: Kysely<DB>,
  who: { userId: number } | { keyId: number },
  reason: string,
  actor: Principal | null = null,
): Promise<number> {
  const paused = await pauseBatchesWhere(db, who, reason);
  for (const batch of paused) {
    await appendAudit(db, {
      actor: actor ?? { label: 'system' },
      action: 'batch.pause',
      target: `batch:${batch.id}`,
      result: 'paused',
      details: {
        reason,
        owner: { user: batch.user_label, userId: batch.user_id, keyId: batch.key_id },
        feature: batch.feature,
        processed: batch.processed,
      },
    });
  }
  return paused.length;
}

export class BatchService {
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private stopped = true;
  private loops: Promise<void>[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly options: BatchRunnerOptions) {}

  /** Stores a batch and its rows; the workers start on it at once. */
  async create(
    batch: NewBatch,
    rows: AsyncIterable<BatchRowInput[]> | Iterable<BatchRowInput[]>,
  ): Promise<number> {
    const { db } = this.options;
    const id = await insertBatch(db, {
      feature: batch.feature,
      command: batch.command,
      options: JSON.stringify(batch.options),
      fileName: batch.fileName,
      storedFile: batch.storedFile,
      iface: batch.iface,
      userLabel: batch.actor.email,
      userId: batch.actor.userId,
      keyId: batch.actor.keyId ?? null,
      total: batch.total + batch.invalid,
      valid: batch.total,
      invalid: batch.invalid,
    });
    const size = this.options.chunkSize ?? chunkSizeFor(batch.total);
    let seq = 0;
    for await (const group of rows) {
      for (let i = 0; i < group.length; i += INSERT_ROWS) {
        const slice = group.slice(i, i + INSERT_ROWS);
        const first = seq + 1;
        seq += slice.length;
        const column = (pick: (item: BatchRowInput) => string | undefined) =>
          slice.map((item) => pick(item) ?? null);
        await insertChunkRows(db, id, first, size, {
          imeis: slice.map((item) => item.imei),
          names: column((r) => r.name),
          amounts: column((r) => r.amount),
          dates: column((r) => r.date),
          templates: column((r) => r.template),
          headers: column((r) => r.header),
          messages: column((r) => r.message),
        });
      }
    }
    await releaseBatch(db, id);
    await appendAudit(db, {
      actor: batch.actor,
      action: `batch.${batch.command}`,
      target: `batch:${id}`,
      address: batch.address,
      result: 'accepted',
      details: { feature: batch.feature, file: batch.fileName, rows: seq, invalid: batch.invalid },
    });
    this.poke();
    return id;
  }

  /**
   * Device action to ALL (design.md §4): a batch without a file (interface B) whose rows are every
   * enrolled device the principal may reach, stored in one statement; the workers record its commands
   * chunk by chunk through the same rules as every command (commands/issue.ts), at batch priority, and
   * online devices get theirs as each chunk commits. Its progress is the batch's (v2/batchStatus).
   */
  async issueToAll(request: {
    command: RawCommand;
    options?: CommandOptions;
    actor: Principal;
    address?: string;
  }): Promise<{ batchId: number; total: number }> {
    const { actor } = request;
    this.assertMayStart(actor, request.command);
    // The devices the principal may reach: a retailer's user, its retailer's only.
    const devices = scopeFor(actor, 'devices');
    const options = request.options ?? {};
    const created = await inTransaction(this.options.db, async (trx) => {
      const id = await insertBatch(trx, {
        feature: 'deviceaction',
        command: request.command,
        options: JSON.stringify(options),
        fileName: null,
        storedFile: null,
        iface: 'B',
        userLabel: actor.email,
        userId: actor.userId,
        keyId: actor.keyId ?? null,
        total: 0,
        valid: 0,
        invalid: 0,
      });
      const size = this.options.chunkSize ?? MAX_CHUNK_SIZE;
      const total = await insertAllDevicesRows(trx, id, size, devices);
      await releaseBatch(trx, id, { total });
      await appendAudit(trx, {
        actor,
        action: `command.${request.command}`,
        target: 'ALL',
        address: request.address ?? null,
        result: 'QUEUED',
        details: { batchId: id, devices: total, interface: 'B' },
      });
      return { batchId: id, total };
    });
    this.poke();
    return created;
  }

  private async get(id: number): Promise<BatchRow> {
    const batch = await findBatch(this.options.db, id);
    if (!batch) throw notFound(BATCH_AUTHORITY_MESSAGES.noSuchBatch);
    return batch;
  }

  /** Starting a batch of `command` (or a per-IMEI call of the spec's browser loop): its screen's permission. */
  assertMayStart(actor: Principal, command: RawCommand): void {
    authorize(actor, 'batches', 'use', { raw: command }, () => forbidden(MESSAGES.unauthorised));
  }

  /**
   * A batch the principal may read (authz/resources/batches.ts `read`): the permission of its command's
   * screen, and its owner or a strictly higher level. Refused with 403 and a clear message; another
   * tenant's batch is 'No such batch', as one that does not exist.
   */
  async authorised(id: number, actor: Principal): Promise<BatchWithOwner> {
    const batch = await findBatchWithOwner(this.options.db, id);
    if (!batch) throw notFound(BATCH_AUTHORITY_MESSAGES.noSuchBatch);
    const refusal = batchRefusal(actor, 'read', batchObject(batch));
    if (refusal) throw refusal;
    return batch;
  }

  /** The user's latest incomplete batch of a feature (the resume card), if it may still read it. */
  async current(actor: Principal, feature: string): Promise<BatchRow | null> {
    const { userId } = scopeFor(actor, 'batches');
    const batch = await findCurrentBatch(this.options.db, feature, userId);
    if (!batch) return null;
    const owner = { userId, level: actor.userlevel, retailerPhone: actor.retailerPhone };
    return may(actor, 'batches', 'read', { raw: batch.command, owner }) ? batch : null;
  }

  /**
   * A page of the batches `actor` may read (the Batches screen), newest first: those with an id below
   * `before`, of one feature with `statusOf`. Each row is checked again with the rule itself
   * (`batchRefusal`), so the query can only ever show less. `next` is the `before` of the next page.
   */
  async list(
    actor: Principal,
    page: { before?: number | undefined; limit: number; statusOf?: string | undefined },
  ): Promise<{ items: BatchWithOwner[]; next: number | null }> {
    const rows = await listVisibleBatches(this.options.db, scopeFor(actor, 'batches'), {
      before: page.before,
      limit: page.limit,
      feature: page.statusOf,
    });
    const last = rows.at(-1);
    return {
      items: rows.filter((batch) => may(actor, 'batches', 'read', batchObject(batch))),
      next: rows.length === page.limit && last ? Number(last.id) : null,
    };
  }

  /**
   * Pause, resume (Process) or discard (New Batch), for a principal with authority over the batch. Each
   * attempt is audited with the batch's owner, refused or not. Returns the batch as it is after.
   */
  /** How many of a batch's commands are in each status (its rows still to process as QUEUED), as the batch is read. */
  async commandCounts(id: number, actor: Principal): Promise<{ status: CommandStatus; n: number }[]> {
    await this.authorised(id, actor);
    return countBatchCommandsByStatus(this.options.db, id);
  }

  /** A page of a batch's results after S.No. `offset` in a selection, and how many the selection holds. */
  async results(
    batch: BatchRow,
    selection: ItemSelection,
    page: { offset: number; limit: number },
  ): Promise<{ items: BatchItemRow[]; total: number }> {
    const { db } = this.options;
    const [items, total] = await Promise.all([
      listBatchItems(db, Number(batch.id), page.offset, page.limit, selection),
      selectionTotal(db, batch, selection),
    ]);
    return { items, total };
  }

  /** A batch's results (the selection) as CSV, streamed; the download is audited before it starts. */
  async exportResults(
    batch: BatchRow,
    selection: ItemSelection,
    audit: { actor: Principal; address: string; filter: string; reason: string | null },
  ): Promise<{ total: number; kind: BatchKind; stream: Readable }> {
    const { db } = this.options;
    const total = await selectionTotal(db, batch, selection);
    const kind = batchKindOf(batch.command);
    await appendAudit(db, {
      actor: audit.actor,
      action: 'batch.export',
      target: `batch:${batch.id}`,
      address: audit.address,
      result: 'success',
      details: { filter: audit.filter, reason: audit.reason, rows: total },
    });
    return { total, kind, stream: resultsCsvStream(db, Number(batch.id), kind, selection) };
  }

  /**
   * A batch the client runs itself (the spec's browser loop), recorded for the history: its progress
   * row (made on the first call, updated after) and the audit row, in one transaction.
   */
  async recordClientBatch(request: {
    actor: Principal;
    address: string;
    statusOf: string;
    command: RawCommand;
    fileName: string;
    lastImei: string | null;
    isComplete: string;
  }): Promise<void> {
    const { actor } = request;
    const complete = request.isComplete === 'complete';
    await inTransaction(this.options.db, async (trx) => {
      const existing = await findClientBatch(trx, request.statusOf, request.fileName, actor.userId);
      let id: number;
      if (existing) {
        id = Number(existing.id);
        await updateClientBatch(trx, id, { lastImei: request.lastImei, complete });
      } else {
        id = await insertClientBatch(trx, {
          feature: request.statusOf,
          command: request.command,
          fileName: request.fileName,
          iface: actor.credential === 'key' ? 'A' : 'B',
          userLabel: actor.email,
          userId: actor.userId,
          keyId: actor.keyId ?? null,
          complete,
          lastImei: request.lastImei,
        });
      }
      await appendAudit(trx, {
        actor,
        action: 'batch.status',
        target: `batch:${id}`,
        address: request.address,
        result: request.isComplete,
        details: { statusOf: request.statusOf, fileName: request.fileName, lastimei: request.lastImei },
      });
    });
  }

  /** An IMEI list the client sends itself (updateCommandOnServer.php): recorded in the audit log only. */
  async recordList(request: { actor: Principal; address: string; command: RawCommand; imeis: string[] }) {
    const { imeis } = request;
    await appendAudit(this.options.db, {
      actor: request.actor,
      action: `batch.list.${request.command}`,
      address: request.address,
      result: 'recorded',
      details: { count: imeis.length, first: imeis[0] ?? null, last: imeis.at(-1) ?? null },
    });
  }

  async control(action: BatchControl, id: number, actor: Principal, address: string): Promise<BatchRow> {
    const { db } = this.options;
    const batch = await findBatchWithOwner(db, id);
    if (!batch) throw notFound(BATCH_AUTHORITY_MESSAGES.noSuchBatch);
    // Another tenant's batch is unknown: nothing is audited about it for this caller.
    if (!may(actor, 'batches', 'see', batchObject(batch)))
      throw notFound(BATCH_AUTHORITY_MESSAGES.noSuchBatch);
    const audit = (into: Kysely<DB>, result: string, extra: Record<string, unknown> = {}) =>
      appendAudit(into, {
        actor,
        action: `batch.${action}`,
        target: `batch:${id}`,
        address,
        result,
        details: {
          owner: {
            user: batch.user_label,
            userId: batch.user_id,
            keyId: batch.key_id,
            level: ownerLevel(batch),
          },
          feature: batch.feature,
          command: batch.command,
          processed: batch.processed,
          ...extra,
        },
      });
    const refusal = batchRefusal(actor, 'control', batchObject(batch));
    if (refusal) {
      await audit(db, 'refused', { reason: refusal.message });
      throw refusal;
    }
    // The change and its audit row commit together.
    const changed = await inTransaction(db, async (trx) => {
      if (action === 'pause') {
        const paused = await pauseBatch(trx, id);
        await audit(trx, paused ? 'paused' : 'unchanged');
        return paused;
      }
      if (action === 'cancel') {
        const discarded = await discardBatch(trx, id);
        await audit(trx, discarded ? 'discarded' : 'unchanged');
        return discarded;
      }
      // Paused because its owner or key lost standing: it goes on under the identity of whoever resumed
      // it (a higher level, or the owner once in good standing again), as the audit row records; else
      // the worker's standing check would pause it again at once.
      const actingAs = batch.paused_reason
        ? { userId: actor.userId, email: actor.email, keyId: actor.keyId ?? null }
        : undefined;
      const resumed = await resumeBatch(trx, id, actingAs);
      await audit(
        trx,
        resumed ? 'resumed' : 'unchanged',
        actingAs
          ? {
              pausedReason: batch.paused_reason,
              nowRunsAs: { user: actingAs.email, userId: actingAs.userId, keyId: actingAs.keyId },
            }
          : {},
      );
      return resumed;
    });
    if (changed && action === 'resume') this.poke();
    return this.get(id);
  }

  // ---- Workers ----

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const workers = this.options.workers ?? 2;
    // Shared machinery: as the system (each batch's scope is the service's), db/tenant.ts.
    this.loops = asSystem(() => Array.from({ length: workers }, () => this.loop()));
  }

  /**
   * Stops this instance's workers after the chunks under way. Its batches keep their place and their
   * leases, which lapse on their own within LEASE_MS: another instance working on the same batch renews
   * the lease and goes on with it; with none, the batch shows as interrupted and the operator resumes it
   * from the console (spec §4.4), exactly where it stopped.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.poke();
    await Promise.allSettled(this.loops);
    this.loops = [];
  }

  poke(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      let worked = false;
      try {
        worked = await this.step();
      } catch (error) {
        this.options.log.error({ err: error }, 'batch worker: step failed');
        await this.sleep(1000);
      }
      if (!worked) await this.sleep(this.options.pollMs ?? 500);
      // Let single commands and reads in between chunks.
      else await new Promise((resolve) => setImmediate(resolve));
    }
  }

  /**
   * Picks a runnable batch (new, running under a live lease, or under this instance's own lease, which may
   * have lapsed while the database was out of reach), takes or renews the lease, runs one chunk.
   */
  async step(): Promise<boolean> {
    const { db } = this.options;
    const batch = await leaseNextBatch(db, this.instanceId, LEASE_MS);
    if (!batch) return false;
    const record = {
      ...this.options.commands.recordOptions(true),
      ...(this.options.oneShotTtlMs !== undefined ? { oneShotTtlMs: this.options.oneShotTtlMs } : {}),
    };
    const outcome = await inTransaction(db, async (trx) => {
      // The owner's (and key's) standing, under a share lock held to commit: see lockStanding.
      const reason = await this.standingLost(trx, batch);
      if (reason) return null;
      return processChunk(trx, batch, { retailerPhone: batch.retailer_phone }, record);
    });
    if (outcome === null) return false;
    if (outcome.processed === 0) {
      await this.completeIfDone(Number(batch.id), batch.retailer_phone);
      return false;
    }
    // Online devices get theirs now (after any older queued ones); others on reconnect.
    await this.options.commands.dispatcher.afterRecorded(outcome.outcomes, (index) => ({
      command: outcome.requests[index]?.command as RawCommand,
      options: outcome.requests[index]?.options ?? {},
    }));
    return true;
  }

  /**
   * In the chunk's transaction: when the owner's account is disabled, or the key that started the batch
   * deactivated, the batch pauses with the reason (audited) and the chunk does not run. Returns the reason.
   */
  private async standingLost(
    trx: Transaction<DB>,
    batch: Pick<BatchRow, 'id' | 'user_id' | 'key_id' | 'user_label'>,
  ): Promise<string | null> {
    if (batch.user_id === null) return null;
    const standing = await lockStanding(trx, { userId: batch.user_id, keyId: batch.key_id });
    const reason = !standing.userActive
      ? BATCH_PAUSE_REASONS.ownerDisabled
      : !standing.keyActive
        ? BATCH_PAUSE_REASONS.keyDeactivated
        : null;
    if (!reason) return null;
    await pauseForStanding(trx, Number(batch.id), reason);
    await appendAudit(trx, {
      actor: { label: 'system' },
      action: 'batch.pause',
      target: `batch:${batch.id}`,
      result: 'paused',
      details: { reason, owner: { user: batch.user_label, userId: batch.user_id, keyId: batch.key_id } },
    });
    this.options.log.warn({ batchId: Number(batch.id), reason }, 'batch paused: its owner lost standing');
    return reason;
  }

  /** Completes a batch whose every row is done: its audit row and its webhook event commit with it. */
  private async completeIfDone(id: number, retailerPhone: string | null): Promise<void> {
    const { db } = this.options;
    const events = this.options.events ?? NO_EVENTS;
    const emitted = await inTransaction(db, async (trx) => {
      if (!(await completeIfNoChunks(trx, id))) return 0;
      const batch = await findBatch(trx, id);
      if (!batch) return 0;
      await appendAudit(trx, {
        actor: { label: batch.user_label },
        action: `batch.${batch.command}`,
        target: `batch:${id}`,
        result: 'complete',
        details: { processed: batch.processed, found: batch.found, notFound: batch.not_found },
      });
      return events.emit(trx, [batchCompletedEvent({ ...batch, retailer_phone: retailerPhone })]);
    });
    if (emitted > 0) events.wake();
  }
}
