/**
 * The batch workers: on every instance, `workers` loops each pick a runnable batch, take
 * or renew its lease and run one chunk of it in one transaction (chunk.ts, `processChunk`), then dispatch
 * its commands to the online devices; a batch with no chunk left completes, with its audit row and its
 * batch.completed event. Before every chunk the owner's (and key's) standing is checked under lock: a
 * disabled owner or deactivated key pauses the batch instead. A batch whose lease lapsed (its server
 * crashed or stopped) is not picked up again by another instance on its own: the console shows it as an
 * incomplete batch that the operator resumes (Process) or discards (New Batch) on its resume card.
 * The instance that held the lease takes it up again (its lease may lapse while the database is out of
 * reach). Storing, reading and steering batches is the API's (service.ts).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { RawCommand } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { asSystem } from '../../db/tenant';
import { inTransaction } from '../../db/transaction';
import type { BatchRow, DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import type { CommandService } from '../commands/service';
import { batchCompletedEvent, type EventSink, NO_EVENTS } from '../webhooks/events';
import { processChunk } from './chunk';
import { completeIfNoChunks, findBatch, leaseNextBatch, lockStanding, pauseForStanding } from './repository';
import { BATCH_PAUSE_REASONS } from './service';

/** How long a worker's claim on a batch lasts without renewal (renewed after every chunk). */
export const LEASE_MS = 15_000;

export interface BatchWorkerOptions {
  db: Kysely<DB>;
  commands: CommandService;
  log: FastifyBaseLogger;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
  /** Workers of this instance (several share one batch through SKIP LOCKED). */
  workers?: number;
  pollMs?: number;
  /** Webhook events (batch.completed). */
  events?: EventSink;
}

export class BatchWorker {
  readonly instanceId = `${hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
  private stopped = true;
  private loops: Promise<void>[] = [];
  private wake: (() => void) | null = null;

  constructor(private readonly options: BatchWorkerOptions) {}

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
   * from the console's resume card, exactly where it stopped.
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
