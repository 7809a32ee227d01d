/**
 * The batch queries that steer a batch and decide who may: a batch with its owner's level, its control
 * (pause, resume, discard), the pause of an owner's or a key's batches when their standing goes, the
 * standing check a chunk makes under lock, and the client-run batches of the spec's browser loop.
 */
import type { CommandInterface, UserLevel } from '@lendlock/contract';
import { type Kysely, type RawBuilder, sql, type Transaction } from 'kysely';
import type { BatchScope } from '../../authz/resources/batches';
import type { TenantScope } from '../../authz/tenancy';
import type { BatchItemRow, BatchRow, DB } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export type BatchWithOwner = BatchRow & {
  owner_level: UserLevel | null;
  owner_retailer_phone: string | null;
};

/**
 * A batch with the current level and tenant of the user who started it (null level: the system, or no
 * such user; null tenant: the lender).
 */
export async function findBatchWithOwner(db: Db, id: number): Promise<BatchWithOwner | undefined> {
  return db
    .selectFrom('batches')
    .leftJoin('users', 'users.id', 'batches.user_id')
    .selectAll('batches')
    .select(['users.userlevel as owner_level', 'users.retailer_phone as owner_retailer_phone'])
    .where('batches.id', '=', id)
    .executeTakeFirst();
}

export async function findBatch(db: Db, id: number): Promise<BatchRow | undefined> {
  return db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A user's latest incomplete batch of a feature (the resume card). */
export async function findCurrentBatch(
  db: Db,
  feature: string,
  userId: number,
): Promise<BatchRow | undefined> {
  return db
    .selectFrom('batches')
    .selectAll()
    .where('feature', '=', feature)
    .where('user_id', '=', userId)
    .where('status', '=', 'incomplete')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** Which processed rows: a result ('found' or 'not found'), and for 'not found' one reason (`note`). */
export interface ItemSelection {
  result?: 'found' | 'not found';
  note?: string;
}

/**
 * Up to `limit` processed rows after S.No. `offset` (keyset), in S.No. order, of the selection. The
 * primary key (batch_id, seq) serves all rows and the found ones; the partial indexes of migration 0024
 * serve the not found ones, of any reason or of one, so a first page never reads the whole batch.
 */
export async function listBatchItems(
  db: Db,
  batchId: number,
  offset: number,
  limit: number,
  selection: ItemSelection = {},
): Promise<BatchItemRow[]> {
  return db
    .selectFrom('batch_items')
    .selectAll()
    .where('batch_id', '=', batchId)
    .$if(selection.result !== undefined, (q) => q.where('result', '=', selection.result ?? null))
    .$if(selection.note !== undefined, (q) => q.where('note', '=', selection.note ?? null))
    .where('seq', '>', offset)
    .orderBy('seq')
    .limit(limit)
    .execute();
}

/** How many processed rows of the batch the selection holds. */
export async function countBatchItems(db: Db, batchId: number, selection: ItemSelection): Promise<number> {
  const row = await db
    .selectFrom('batch_items')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('batch_id', '=', batchId)
    .$if(selection.result !== undefined, (q) => q.where('result', '=', selection.result ?? null))
    .$if(selection.note !== undefined, (q) => q.where('note', '=', selection.note ?? null))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * A page of the batches of `visibility` (authz/resources/batches.ts `scope`: the reader's own, and those
 * of owners of the given levels, 'system' for a batch without a user and a user whose level is unknown
 * counting as SUPERADMIN, as `issuerLevel` says; of the given raw commands only) with an id below
 * `before`, newest first, each with its owner's level and tenant.
 */
export async function listVisibleBatches(
  db: Db,
  visibility: BatchScope,
  page: { before?: number | undefined; limit: number; feature?: string | undefined },
): Promise<BatchWithOwner[]> {
  if (visibility.commands.length === 0) return [];
  return db
    .selectFrom('batches')
    .leftJoin('users', 'users.id', 'batches.user_id')
    .selectAll('batches')
    .select(['users.userlevel as owner_level', 'users.retailer_phone as owner_retailer_phone'])
    .where(inBatchScope(visibility, sql`users.userlevel`))
    .$if(page.before !== undefined, (q) => q.where('batches.id', '<', page.before ?? 0))
    .$if(page.feature !== undefined, (q) => q.where('batches.feature', '=', page.feature ?? ''))
    .orderBy('batches.id', 'desc')
    .limit(page.limit)
    .execute();
}

/**
 * Whether a row of `batches` is in `scope` (authz/resources/batches.ts), as an SQL condition; `userLevel`
 * is its owner's level (null without a user or for a user gone, which count as 'system' and SUPERADMIN).
 */
export function inBatchScope(scope: BatchScope, userLevel: RawBuilder<unknown>): RawBuilder<boolean> {
  if (scope.commands.length === 0) return sql<boolean>`FALSE`;
  const ownerLevel = sql`CASE WHEN batches.user_id IS NULL THEN 'system'
    ELSE coalesce(${userLevel}::text, 'SUPERADMIN') END`;
  const others =
    scope.ownerLevels.length === 0 ? sql`FALSE` : sql`${ownerLevel} IN (${sql.join([...scope.ownerLevels])})`;
  return sql<boolean>`(batches.command IN (${sql.join([...scope.commands])})
    AND (batches.user_id = ${scope.userId} OR ${others}))`;
}

/** Pause: true when an incomplete batch was paused (a chunk under way finishes first). */
export async function pauseBatch(db: Db, id: number): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({ paused: true })
    .where('id', '=', id)
    .where('status', '=', 'incomplete')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Resume: clears the pause, its reason and the lease. `actingAs`, when given, becomes the identity the
 * rest of the batch runs under (its commands' user and key): see BatchService.control.
 */
export async function resumeBatch(
  db: Db,
  id: number,
  actingAs?: { userId: number; email: string; keyId: number | null },
): Promise<boolean> {
  const result = await db
    .updateTable('batches')
    .set({
      paused: false,
      paused_reason: null,
      lease_owner: null,
      lease_until: null,
      ...(actingAs ? { user_id: actingAs.userId, user_label: actingAs.email, key_id: actingAs.keyId } : {}),
    })
    .where('id', '=', id)
    .where('status', '=', 'incomplete')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Discard (New Batch): the rest of an incomplete batch is dropped; rows already processed stay. */
export async function discardBatch(trx: Transaction<DB>, id: number): Promise<boolean> {
  const cancelled = await trx
    .updateTable('batches')
    .set({ status: 'cancelled', paused: true, completed_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'incomplete')
    .executeTakeFirst();
  if (Number(cancelled.numUpdatedRows) === 0) return false;
  // A chunk under way finishes first: its row is locked until it commits.
  await trx.deleteFrom('batch_chunks').where('batch_id', '=', id).execute();
  return true;
}

/**
 * Pauses, with `reason`, every incomplete batch of a user (`userId`: whatever credential started it) or
 * of one key (`keyId`), unless it is already paused for that reason (a key's reason never replaces the
 * owner's). Returns the batches paused, for their audit rows.
 */
export async function pauseBatchesWhere(
  db: Db,
  who: { userId: number } | { keyId: number },
  reason: string,
): Promise<Pick<BatchRow, 'id' | 'user_label' | 'user_id' | 'key_id' | 'feature' | 'processed'>[]> {
  return (
    db
      .updateTable('batches')
      .set({ paused: true, paused_reason: reason })
      .where('status', '=', 'incomplete')
      // The owner's reason replaces a key's; a key's replaces none.
      .$if('userId' in who, (q) =>
        q
          .where('user_id', '=', 'userId' in who ? who.userId : 0)
          .where(sql<boolean>`paused_reason IS DISTINCT FROM ${reason}`),
      )
      .$if('keyId' in who, (q) =>
        q.where('key_id', '=', 'keyId' in who ? who.keyId : 0).where('paused_reason', 'is', null),
      )
      .returning(['id', 'user_label', 'user_id', 'key_id', 'feature', 'processed'])
      .execute()
  );
}

export interface Standing {
  userActive: boolean;
  /** True when no key started the batch. */
  keyActive: boolean;
}

/**
 * The standing of a batch's owner and key, read under a share lock held to the end of the transaction:
 * a disable or deactivation (which updates that row) waits for the chunk to commit, and a chunk that
 * starts while one is under way waits for it, then reads the committed status. So no chunk commits
 * commands after a disable or deactivation has committed.
 */
export async function lockStanding(
  trx: Transaction<DB>,
  owner: { userId: number; keyId: number | null },
): Promise<Standing> {
  const user = await trx
    .selectFrom('users')
    .select('userstatus')
    .where('id', '=', owner.userId)
    .forShare()
    .executeTakeFirst();
  const key =
    owner.keyId === null
      ? null
      : await trx
          .selectFrom('api_keys')
          .select('status')
          .where('id', '=', owner.keyId)
          .forShare()
          .executeTakeFirst();
  return {
    userActive: user?.userstatus === 'ACTIVE',
    keyActive: owner.keyId === null || key?.status === 'active',
  };
}

/** The worker found the owner or key without standing: the batch pauses with the reason. */
export async function pauseForStanding(trx: Transaction<DB>, id: number, reason: string): Promise<void> {
  await trx
    .updateTable('batches')
    .set({ paused: true, paused_reason: reason, lease_owner: null, lease_until: null })
    .where('id', '=', id)
    .where('status', '=', 'incomplete')
    .execute();
}

// ---- Batches the client runs itself (the spec's browser loop), recorded for the history ----

/** The caller's latest client-run batch of a feature and file. */
export async function findClientBatch(
  db: Db,
  feature: string,
  fileName: string,
  userId: number,
): Promise<{ id: number } | undefined> {
  return (
    db
      .selectFrom('batches')
      .select('id')
      .where('feature', '=', feature)
      .where('file_name', '=', fileName)
      .where('user_id', '=', userId)
      // Only batches the client runs itself; a server-run batch keeps its own state.
      .where('stored_file', 'is', null)
      .where('feature', '!=', 'deviceaction')
      .orderBy('id', 'desc')
      .executeTakeFirst()
  );
}

export async function updateClientBatch(
  db: Db,
  id: number,
  progress: { lastImei: string | null; complete: boolean },
): Promise<void> {
  await db
    .updateTable('batches')
    .set({
      last_imei: progress.lastImei,
      updated_at: sql<Date>`now()`,
      ...(progress.complete ? { status: 'complete' as const, completed_at: sql<Date>`now()` } : {}),
    })
    .where('id', '=', id)
    .where('status', '!=', 'cancelled')
    .execute();
}

export async function insertClientBatch(
  db: Db,
  batch: {
    feature: string;
    command: string;
    fileName: string;
    iface: 'A' | 'B';
    userLabel: string;
    userId: number;
    keyId: number | null;
    complete: boolean;
    lastImei: string | null;
  },
): Promise<number> {
  const row = await db
    .insertInto('batches')
    .values({
      feature: batch.feature,
      command: batch.command,
      file_name: batch.fileName,
      interface: batch.iface,
      user_label: batch.userLabel,
      user_id: batch.userId,
      key_id: batch.keyId,
      status: batch.complete ? 'complete' : 'incomplete',
      paused: true,
      last_imei: batch.lastImei,
      remarks: 'progress reported by the client',
      ...(batch.complete ? { completed_at: sql<Date>`now()` } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

// ---- Server-run batches: storing them, the workers' lease, their chunks ----

export interface NewBatchRow {
  feature: string;
  command: string;
  options: string;
  fileName: string | null;
  storedFile: string | null;
  iface: CommandInterface;
  userLabel: string;
  userId: number | null;
  keyId: number | null;
  total: number;
  valid: number;
  invalid: number;
}

/** A new batch, paused until its rows are stored (no worker starts on a half-written batch). */
export async function insertBatch(db: Db, batch: NewBatchRow): Promise<number> {
  const row = await db
    .insertInto('batches')
    .values({
      feature: batch.feature,
      command: batch.command,
      options: batch.options,
      file_name: batch.fileName,
      stored_file: batch.storedFile,
      interface: batch.iface,
      user_label: batch.userLabel,
      user_id: batch.userId,
      key_id: batch.keyId,
      total: batch.total,
      valid: batch.valid,
      invalid: batch.invalid,
      paused: true,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The columns of a batch's rows, as arrays in S.No. order (a Notify column with no value: null). */
export interface BatchRowColumns {
  imeis: string[];
  names: (string | null)[];
  amounts: (string | null)[];
  dates: (string | null)[];
  templates: (string | null)[];
  headers: (string | null)[];
  messages: (string | null)[];
}

/**
 * Stores rows of a batch from S.No. `first` on, grouped into chunks of `size` rows by S.No.: one
 * statement from arrays (unnest), a `batch_chunks` row per chunk. A Notify column with no value in a
 * chunk is stored as NULL.
 */
export async function insertChunkRows(
  db: Db,
  batchId: number,
  first: number,
  size: number,
  rows: BatchRowColumns,
): Promise<void> {
  await sql`
    INSERT INTO batch_chunks (batch_id, first_seq, seqs, imeis, names, amounts, dates, templates, headers, messages)
    SELECT ${batchId}::bigint, min(v.seq), array_agg(v.seq ORDER BY v.seq), array_agg(v.imei ORDER BY v.seq),
           CASE WHEN count(v.name) > 0 THEN array_agg(v.name ORDER BY v.seq) END,
           CASE WHEN count(v.amount) > 0 THEN array_agg(v.amount ORDER BY v.seq) END,
           CASE WHEN count(v.date) > 0 THEN array_agg(v.date ORDER BY v.seq) END,
           CASE WHEN count(v.template) > 0 THEN array_agg(v.template ORDER BY v.seq) END,
           CASE WHEN count(v.header) > 0 THEN array_agg(v.header ORDER BY v.seq) END,
           CASE WHEN count(v.message) > 0 THEN array_agg(v.message ORDER BY v.seq) END
    FROM (SELECT (${first}::int + u.n - 1)::int AS seq, u.* FROM unnest(
            ${rows.imeis}::text[], ${rows.names}::text[], ${rows.amounts}::text[], ${rows.dates}::text[],
            ${rows.templates}::text[], ${rows.headers}::text[], ${rows.messages}::text[])
          WITH ORDINALITY AS u(imei, name, amount, date, template, header, message, n)) v
    GROUP BY (v.seq - 1) / ${size}::int`.execute(db);
}

/**
 * Device action ALL's rows: every enrolled device not released of the scope (one retailer's, or all),
 * in imei1 order, stored as the rows of batch `batchId` in chunks of `size`, in one statement. Returns
 * how many.
 */
export async function insertAllDevicesRows(
  db: Db,
  batchId: number,
  size: number,
  scope: TenantScope,
): Promise<number> {
  const { retailerPhone } = scope;
  const result = await sql<{ n: number }>`
    WITH v AS (
      SELECT imei1 AS imei, row_number() OVER (ORDER BY imei1)::int AS seq
      FROM devices
      WHERE claimstatus = 'ENROLLED' AND coalesce((desired_state->>'released')::boolean, false) = false
        ${retailerPhone !== null ? sql`AND retailer_phone = ${retailerPhone}` : sql``}
    ), chunks AS (
      INSERT INTO batch_chunks (batch_id, first_seq, seqs, imeis)
      SELECT ${batchId}::bigint, min(seq), array_agg(seq ORDER BY seq), array_agg(imei ORDER BY seq)
      FROM v GROUP BY (seq - 1) / ${size}::int
    )
    SELECT count(*)::int AS n FROM v`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** The batch's rows are all stored: its counts, and the workers may start. */
export async function releaseBatch(db: Db, id: number, counts?: { total: number }): Promise<void> {
  await db
    .updateTable('batches')
    .set({ paused: false, ...(counts ? { total: counts.total, valid: counts.total } : {}) })
    .where('id', '=', id)
    .execute();
}

/**
 * Picks a runnable batch for worker `instanceId` (new, running under a live lease, or under this
 * instance's own lease, which may have lapsed while the database was out of reach, or a device action
 * ALL, which has no resume card) and takes or renews its lease; with the retailer phone of its owner.
 */
export async function leaseNextBatch(
  db: Db,
  instanceId: string,
  leaseMs: number,
): Promise<(BatchRow & { retailer_phone: string | null }) | undefined> {
  const picked = await sql<BatchRow & { retailer_phone: string | null }>`
    UPDATE batches b SET lease_owner = ${instanceId}, lease_until = now() + ${leaseMs} * interval '1 millisecond',
      started_at = coalesce(started_at, now())
    WHERE b.id = (
      SELECT id FROM batches
      WHERE status = 'incomplete' AND NOT paused
        AND (lease_owner IS NULL OR lease_until > now() OR lease_owner = ${instanceId}
             -- Device action ALL has no resume card: any instance takes up its lapsed lease.
             OR feature = 'deviceaction')
      ORDER BY id LIMIT 1
    )
    RETURNING b.*, (SELECT retailer_phone FROM users u WHERE u.id = b.user_id) AS retailer_phone`.execute(db);
  return picked.rows[0];
}

/** Completes a batch with no chunk left; true when this call completed it. */
export async function completeIfNoChunks(db: Db, id: number): Promise<boolean> {
  const done = await sql<{ id: number }>`
    UPDATE batches SET status = 'complete', completed_at = now(), lease_owner = NULL, lease_until = NULL
    WHERE id = ${id} AND status = 'incomplete'
      AND NOT EXISTS (SELECT 1 FROM batch_chunks WHERE batch_id = ${id})
    RETURNING id`.execute(db);
  return done.rows.length > 0;
}

export interface ClaimedItem {
  first_seq: number;
  seq: number;
  imei: string;
  message: string | null;
  template: string | null;
}

/** Claims the batch's next unprocessed chunk (SKIP LOCKED: several workers and instances share a batch). */
export async function claimChunk(trx: Transaction<DB>, batchId: number): Promise<ClaimedItem[]> {
  const claimed = await sql<ClaimedItem>`
    WITH chunk AS (
      SELECT * FROM batch_chunks WHERE batch_id = ${batchId} ORDER BY first_seq LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    SELECT chunk.first_seq, u.seq, u.imei, u.message, u.template
    FROM chunk, unnest(chunk.seqs, chunk.imeis, chunk.messages, chunk.templates) AS u(seq, imei, message, template)
    ORDER BY u.seq`.execute(trx);
  return claimed.rows;
}

export interface ItemResult {
  seq: number;
  result: 'found' | 'not found';
  note: string | null;
  tid: string | null;
}

/**
 * The chunk's rows leave `batch_chunks` and enter `batch_items` with their results (one statement), and
 * the batch's progress (counts, last IMEI) moves on.
 */
export async function finishChunk(
  trx: Transaction<DB>,
  batchId: number,
  firstSeq: number,
  results: readonly ItemResult[],
  last: { seq: number; imei: string },
): Promise<void> {
  await sql`
    WITH done AS (
      DELETE FROM batch_chunks WHERE batch_id = ${batchId} AND first_seq = ${firstSeq}
      RETURNING *
    )
    INSERT INTO batch_items (batch_id, seq, imei, name, amount, date, template, header, message, result, note,
                             transaction_id)
    SELECT done.batch_id, u.seq, u.imei, u.name, u.amount, u.date, u.template, u.header, u.message, r.result,
           r.note, r.tid
    FROM done,
      unnest(done.seqs, done.imeis, done.names, done.amounts, done.dates, done.templates, done.headers, done.messages)
        AS u(seq, imei, name, amount, date, template, header, message)
      JOIN unnest(${results.map((r) => r.seq)}::int[], ${results.map((r) => r.result)}::text[],
                  ${results.map((r) => r.note)}::text[], ${results.map((r) => r.tid)}::text[])
        AS r(seq, result, note, tid) ON r.seq = u.seq`.execute(trx);
  const found = results.filter((r) => r.result === 'found').length;
  await sql`UPDATE batches SET processed = processed + ${results.length}, found = found + ${found},
      not_found = not_found + ${results.length - found},
      last_imei = CASE WHEN ${last.seq} > last_seq THEN ${last.imei} ELSE last_imei END,
      last_seq = greatest(last_seq, ${last.seq}), updated_at = now()
    WHERE id = ${batchId}`.execute(trx);
}
