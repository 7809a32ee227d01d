/**
 * The audit sealer (docs/adr/0009-audit-hash-chain.md): every instance runs one; each round, the one that
 * holds the lease (an advisory lock for the round's transaction) chains the audit rows written since the
 * last round, oldest id first, so a row is sealed within about a second of its commit. Writers never wait
 * for it: `appendAudit` and the set-based command/batch writers only INSERT into audit_log.
 * A round looks from AUDIT_SEAL_LOOKBACK ids before the newest sealed row (a transaction that commits
 * late leaves a lower id behind; an empty chain starts at the first row, so an existing log is sealed
 * from its start), each transaction reading a bounded range of ids (AUDIT_SEAL_BATCH): a round costs the
 * same on a log of any size. A round that finds no new row id (one probe of the primary key) does
 * nothing, except every AUDIT_RECHECK_ROUNDS-th, which looks for late commits: an idle instance holds no
 * transaction (PGlite has one connection for everything). A row that commits more than
 * AUDIT_SEAL_LOOKBACK ids late is sealed by `npm run cli -- audit seal` (the whole log); `audit verify`
 * reports it as not sealed until then.
 * With an anchor key, the instance that sealed also anchors the chain's head (modules/audit/anchor.ts)
 * whenever it moved and AUDIT_ANCHOR_INTERVAL has passed since the last anchor, and once more when it
 * stops: a log line `audit anchor` carrying it, the metrics, and a row in `audit_anchors`.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { asSystem } from '../../db/tenant';
import type { DB } from '../../db/types';
import { type AuditAnchor, anchorHead, formatAnchor } from './anchor';
import { firstUnsealedAuditId, newestAuditId, sealAuditRows } from './repository';

export const AUDIT_SEAL_INTERVAL_MS = 1_000;
export const AUDIT_SEAL_BATCH = 5_000;
export const AUDIT_SEAL_LOOKBACK = 10_000;
/** Every this many rounds a round looks for late commits even when no new row id appeared. */
export const AUDIT_RECHECK_ROUNDS = 10;

export interface AuditSealerOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  intervalMs?: number;
  /** Anchoring the chain's head: the key, how often at most, and who else hears of each anchor. */
  anchor?: {
    key: Buffer;
    intervalMs: number;
    published?: (anchor: AuditAnchor) => void;
  };
}

export class AuditSealer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  private rounds = 0;
  private newestSeen = -1;
  private anchored: AuditAnchor | null = null;
  private anchoredAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly options: AuditSealerOptions) {}

  start(): void {
    if (this.timer || this.stopped) return;
    this.schedule(this.options.intervalMs ?? AUDIT_SEAL_INTERVAL_MS);
  }

  async stop(): Promise<void> {
    const wasRunning = this.timer !== undefined && !this.stopped;
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
    // The head as this instance leaves it, so that the last rows it sealed are anchored too.
    if (wasRunning) await asSystem(() => this.anchorNow()).catch(() => undefined);
  }

  /**
   * Anchors the chain's head when it moved since this instance's last anchor: keeps it, logs it and
   * tells the metrics. Returns it, or null (no key, nothing new). Used by the rounds, stop and tests.
   */
  async anchorNow(): Promise<AuditAnchor | null> {
    const options = this.options.anchor;
    if (!options) return null;
    const anchor = await anchorHead(this.options.db, options.key, this.anchored);
    this.anchoredAt = Date.now();
    if (!anchor) return null;
    this.anchored = anchor;
    this.options.log.info({ anchor: formatAnchor(anchor), seq: anchor.seq }, 'audit anchor');
    options.published?.(anchor);
    return anchor;
  }

  /**
   * Seals the rows written so far, from AUDIT_SEAL_LOOKBACK ids before the newest sealed one, or with
   * `full` from the first unsealed row of the whole log (one anti-join; the CLI's `audit seal`); returns
   * how many. Used by the rounds, the CLI and tests.
   */
  async sealNow(full = false): Promise<number> {
    let total = 0;
    let after: number | null = null;
    if (full) {
      // The whole log: from its first unsealed row (a late commit far behind), else nothing to do.
      const first = await firstUnsealedAuditId(this.options.db);
      if (first === null) return 0;
      after = first - 1;
    }
    for (;;) {
      const round = await sealAuditRows(this.options.db, {
        limit: AUDIT_SEAL_BATCH,
        after,
        lookback: AUDIT_SEAL_LOOKBACK,
      });
      total += round.sealed;
      if (round.scanned < AUDIT_SEAL_BATCH || round.last === null || this.stopped) return total;
      after = round.last;
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = asSystem(() => this.round()).finally(() => {
        this.running = undefined;
        this.schedule(this.options.intervalMs ?? AUDIT_SEAL_INTERVAL_MS);
      });
    }, delayMs);
    this.timer.unref();
  }

  private async round(): Promise<void> {
    this.rounds += 1;
    try {
      // Nothing new since the last round: skip it (one probe of the primary key, no transaction), but
      // look again every AUDIT_RECHECK_ROUNDS rounds for a row whose transaction committed late.
      const newest = await newestAuditId(this.options.db);
      if (newest === this.newestSeen && this.rounds % AUDIT_RECHECK_ROUNDS !== 0) return;
      await this.sealNow();
      this.newestSeen = newest;
      const anchor = this.options.anchor;
      if (anchor && Date.now() - this.anchoredAt >= anchor.intervalMs) await this.anchorNow();
    } catch (error) {
      // The database is away (a restart, a failover): the next round seals what is waiting.
      if (!this.stopped) this.options.log.warn({ err: error }, 'audit sealing failed; retrying');
    }
  }
}
