/**
 * What the metrics read from the database at scrape time (through partial indexes on status), and the
 * latencies of the commands this instance saw acknowledged. Readiness pings through `Database.ping`.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types';

export const PENDING_STATUSES = ['QUEUED', 'SENT', 'DELIVERED'] as const;

/** Commands not yet acknowledged by their device, per status (every status present, 0 when none). */
export async function countPendingCommands(
  db: Kysely<DB>,
): Promise<Record<(typeof PENDING_STATUSES)[number], number>> {
  const rows = await sql<{ status: string; n: number }>`
    SELECT status, count(*)::int AS n FROM commands WHERE status IN ('QUEUED', 'SENT', 'DELIVERED')
    GROUP BY status`.execute(db);
  const count = (status: string) => Number(rows.rows.find((r) => r.status === status)?.n ?? 0);
  return { QUEUED: count('QUEUED'), SENT: count('SENT'), DELIVERED: count('DELIVERED') };
}

/** Batches neither complete nor cancelled (running, paused, interrupted). */
export async function countIncompleteBatches(db: Kysely<DB>): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM batches WHERE status = 'incomplete'`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** The rows of incomplete batches not processed yet. */
export async function countRemainingBatchRows(db: Kysely<DB>): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT coalesce(sum(cardinality(c.seqs)), 0)::int AS n FROM batch_chunks c
    JOIN batches b ON b.id = c.batch_id WHERE b.status = 'incomplete'`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

export async function countOnlineDevices(db: Kysely<DB>): Promise<number> {
  const result = await sql<{ n: number }>`SELECT count(*)::int AS n FROM devices WHERE online`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/**
 * Seconds from issue to the device's final acknowledgement (EXECUTED or FAILED) of the given commands,
 * one value per command that has one.
 */
export async function ackLatencies(
  db: Kysely<DB>,
  acks: readonly { imei1: string; transactionId: string }[],
): Promise<number[]> {
  if (acks.length === 0) return [];
  const result = await sql<{ seconds: number }>`
    SELECT extract(epoch FROM c.completed_at - c.created_at)::float8 AS seconds
    FROM commands c
    JOIN unnest(${acks.map((a) => a.transactionId)}::text[], ${acks.map((a) => a.imei1)}::text[]) AS v(id, imei)
      ON c.transaction_id = v.id AND c.imei1 = v.imei
    WHERE c.status IN ('EXECUTED', 'FAILED') AND c.completed_at IS NOT NULL`.execute(db);
  return result.rows.map((r) => Math.max(0, Number(r.seconds)));
}
