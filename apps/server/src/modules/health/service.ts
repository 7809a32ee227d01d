/**
 * What the health checks and the metrics read (plugins/metrics.ts, health/routes.ts): whether the
 * database answers, and the figures read from it at scrape time. The plugin and the routes run no query
 * of their own.
 */
import type { Database } from '../../db/database';
import { countPendingMail } from '../mail/repository';
import { countOpenCircuits } from '../webhooks/repository';
import { databaseAnswers } from './ping';
import {
  ackLatencies,
  countIncompleteBatches,
  countOnlineDevices,
  countPendingCommands,
  countRemainingBatchRows,
  PENDING_STATUSES,
} from './repository';

export class HealthService {
  constructor(private readonly database: Database) {}

  /** `postgres` or `pglite`. */
  get databaseKind(): Database['kind'] {
    return this.database.kind;
  }

  /** Whether the database answers a `SELECT 1` in time; the failure, if any, goes to `onFailure`. */
  databaseAnswers(onFailure?: (error: unknown) => void): Promise<boolean> {
    return databaseAnswers(this.database, onFailure);
  }

  /** Issue-to-acknowledgement latencies (seconds) of final acknowledgements, one query. */
  ackLatencies(acks: Parameters<typeof ackLatencies>[1]): Promise<number[]> {
    return ackLatencies(this.database.db, acks);
  }

  /** Commands not yet acknowledged, per pending status (each present, 0 when none). */
  async pendingCommands(): Promise<[status: (typeof PENDING_STATUSES)[number], count: number][]> {
    const counts = await countPendingCommands(this.database.db);
    return PENDING_STATUSES.map((status) => [status, counts[status]]);
  }

  incompleteBatches(): Promise<number> {
    return countIncompleteBatches(this.database.db);
  }

  remainingBatchRows(): Promise<number> {
    return countRemainingBatchRows(this.database.db);
  }

  onlineDevices(): Promise<number> {
    return countOnlineDevices(this.database.db);
  }

  pendingMail(): Promise<number> {
    return countPendingMail(this.database.db);
  }

  openCircuits(): Promise<number> {
    return countOpenCircuits(this.database.db);
  }
}
