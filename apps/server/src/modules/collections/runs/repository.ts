/**
 * The daily runs (`collection_runs`, one per lender's day): the lease one instance at a time holds, timed by
 * the database's clock, the cursor committed with each chunk, and the chunks' bounds and locks.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { CollectionRunState, DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export interface RunRow {
  id: number;
  run_date: string;
  version: number;
  state: CollectionRunState;
  lease_owner: string | null;
  cursor: number;
  processed: number;
  counts: unknown;
  resumes: number;
  note: string | null;
  started_at: Date;
  finished_at: Date | null;
}

const RUN_COLUMNS = [
  'id',
  sql<string>`run_date::text`.as('run_date'),
  'version',
  'state',
  'lease_owner',
  'cursor',
  'processed',
  'counts',
  'resumes',
  'note',
  'started_at',
  'finished_at',
] as const;

function runOf(row: RunRow): RunRow {
  return { ...row, id: Number(row.id), cursor: Number(row.cursor), processed: Number(row.processed) };
}

export async function findRun(db: Db, date: string): Promise<RunRow | undefined> {
  const row = await db
    .selectFrom('collection_runs')
    .select(RUN_COLUMNS)
    .where('run_date', '=', date)
    .executeTakeFirst();
  return row ? runOf(row as RunRow) : undefined;
}

export async function recentRuns(db: Db, limit: number): Promise<RunRow[]> {
  const rows = await db
    .selectFrom('collection_runs')
    .select(RUN_COLUMNS)
    .orderBy('run_date', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => runOf(r as RunRow));
}

/** The day's run, created if it does not exist yet (once: run_date is unique). */
export async function ensureRun(db: Db, date: string, version: number): Promise<void> {
  await db
    .insertInto('collection_runs')
    .values({ run_date: date, version })
    .onConflict((oc) => oc.column('run_date').doNothing())
    .execute();
}

/**
 * Takes the lease of the day's run: when it runs (or was stopped by the kill switch, now off) and no
 * other instance holds a live lease. Taking over an expired lease of another instance counts a resume.
 * The lease is timed by the database's clock, the one every instance shares.
 */
export async function takeLease(
  db: Db,
  date: string,
  owner: string,
  leaseMs: number,
): Promise<RunRow | undefined> {
  const result = await sql<RunRow>`
    UPDATE collection_runs SET
      resumes = resumes + CASE WHEN lease_owner IS NOT NULL AND lease_owner <> ${owner} THEN 1 ELSE 0 END,
      state = 'RUNNING', note = NULL,
      lease_owner = ${owner}, lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE run_date = ${date}::date AND state IN ('RUNNING', 'STOPPED')
      AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_until < now())
    RETURNING id, run_date::text AS run_date, version, state, lease_owner, cursor, processed, counts, resumes,
      note, started_at, finished_at`.execute(db);
  const row = result.rows[0];
  return row ? runOf(row) : undefined;
}

/**
 * In a chunk's transaction: the run's row, locked, if `owner` still holds its lease (another instance
 * that took over an expired lease has moved on: this chunk must not run).
 */
export async function lockRunIfLeased(
  trx: Transaction<DB>,
  id: number,
  owner: string,
  leaseMs: number,
): Promise<RunRow | undefined> {
  const result = await sql<RunRow>`
    UPDATE collection_runs SET lease_until = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = ${id} AND lease_owner = ${owner} AND state = 'RUNNING'
    RETURNING id, run_date::text AS run_date, version, state, lease_owner, cursor, processed, counts, resumes,
      note, started_at, finished_at`.execute(trx);
  const row = result.rows[0];
  return row ? runOf(row) : undefined;
}

export async function advanceRun(
  trx: Transaction<DB>,
  id: number,
  values: { cursor: number; processed: number; counts: unknown },
): Promise<void> {
  await trx
    .updateTable('collection_runs')
    .set({ cursor: values.cursor, processed: values.processed, counts: JSON.stringify(values.counts) })
    .where('id', '=', id)
    .execute();
}

export async function finishRun(
  db: Db,
  id: number,
  owner: string,
  state: 'DONE' | 'STOPPED',
  note: string | null,
): Promise<boolean> {
  const result = await db
    .updateTable('collection_runs')
    .set({
      state,
      note,
      lease_owner: null,
      lease_until: null,
      finished_at: state === 'DONE' ? sql<Date>`now()` : null,
    })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives up the lease (the instance stops, or the quiet hours begin): another instance may go on at once. */
export async function releaseLease(db: Db, id: number, owner: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({ lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('lease_owner', '=', owner)
    .execute();
}

/** Runs still RUNNING of earlier days: the day ended before they finished. */
export async function stopStaleRuns(db: Db, today: string, note: string): Promise<number> {
  const result = await db
    .updateTable('collection_runs')
    .set({ state: 'STOPPED', note, lease_owner: null, lease_until: null })
    .where('run_date', '<', today)
    .where('state', 'in', ['RUNNING', 'STOPPED'])
    .where((eb) => eb.or([eb('note', 'is', null), eb('note', '<>', note)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** The kill switch went on: the running runs stop (the chunk under way commits first: see readControl). */
export async function stopRunningRuns(db: Db, note: string): Promise<void> {
  await db
    .updateTable('collection_runs')
    .set({ state: 'STOPPED', note })
    .where('state', '=', 'RUNNING')
    .execute();
}

/**
 * Locks the open instalments overdue by `lockAfter` days or more of the chunk's loans (FOR SHARE): a
 * payment's allocation (which updates the oldest of them first) waits for the chunk to commit, and the
 * chunk's plan, read after this, sees every payment committed before. So no LOCK is recorded beside a
 * payment the plan did not see.
 */
export async function holdOverdueInstalments(
  trx: Transaction<DB>,
  after: number,
  upTo: number,
  date: string,
  lockAfter: number,
): Promise<void> {
  await sql`SELECT 1 FROM loan_instalments
    WHERE loan_id > ${after} AND loan_id <= ${upTo} AND paid_minor < amount_minor
      AND due_date <= ${date}::date - ${lockAfter}::int
    FOR SHARE`.execute(trx);
}

/**
 * The next chunk of a run: the id of the `size`-th loan after `after` (or of the last one) and how many
 * loans that is; null when none is left.
 */
export async function chunkUpperBound(
  db: Db,
  after: number,
  size: number,
): Promise<{ upTo: number; loans: number } | null> {
  const result = await sql<{ id: number | null; n: number }>`
    SELECT max(id)::bigint AS id, count(*)::int AS n
    FROM (SELECT id FROM loans WHERE id > ${after} ORDER BY id LIMIT ${size}) s`.execute(db);
  const row = result.rows[0];
  return !row || row.id === null ? null : { upTo: Number(row.id), loans: Number(row.n) };
}
