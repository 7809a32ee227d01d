/**
 * Durable server-side batches, the API's side: a batch and its rows are stored at upload,
 * with its audit row, in one transaction; the workers (worker.ts) process them in chunks (1 % of the
 * batch, 50 to 500 rows: chunk.ts, `chunkSizeFor`) and keep the progress (last IMEI, counts) in the batch
 * row. Device action ALL is a batch too, without a file. Who may read and steer a batch (pause, resume,
 * discard), its results and their CSV, the client-run batches of the spec's browser loop, and the pause
 * of an owner's or a key's batches when their standing goes.
 */
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
import type { Kysely } from 'kysely';
import { authorize, may, scopeFor } from '../../authz';
import { issuerLevel } from '../../authz/issuer';
import type { BatchObject } from '../../authz/resources/batches';
import { type AppError, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { BatchItemRow, BatchRow, DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import { countBatchCommandsByStatus } from '../commands/repository';
import { chunkSizeFor, MAX_CHUNK_SIZE } from './chunk';
import {
  type BatchWithOwner,
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
  listBatchItems,
  listVisibleBatches,
  pauseBatch,
  pauseBatchesWhere,
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

export interface BatchServiceOptions {
  db: Kysely<DB>;
  /** This instance's workers (worker.ts), woken when a batch is stored or resumed; none: nothing wakes. */
  workers?: { poke(): void };
  /** Rows per chunk (one transaction each), set when a batch is stored; by default `chunkSizeFor` its size. */
  chunkSize?: number;
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
 * worker checks the same standing under lock before every chunk (BatchWorker.step), so no chunk commits
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
  constructor(private readonly options: BatchServiceOptions) {}

  private poke(): void {
    this.options.workers?.poke();
  }

  /**
   * Stores a batch, its rows and its audit row in one transaction: a batch whose rows or audit row cannot
   * be written leaves nothing behind. The workers start on it once it has committed.
   */
  async create(
    batch: NewBatch,
    rows: AsyncIterable<BatchRowInput[]> | Iterable<BatchRowInput[]>,
  ): Promise<number> {
    const id = await inTransaction(this.options.db, (trx) => this.store(trx, batch, rows));
    this.poke();
    return id;
  }

  private async store(
    db: Kysely<DB>,
    batch: NewBatch,
    rows: AsyncIterable<BatchRowInput[]> | Iterable<BatchRowInput[]>,
  ): Promise<number> {
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
    return id;
  }

  /**
   * Device action to ALL: a batch without a file (interface B) whose rows are every
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
}
