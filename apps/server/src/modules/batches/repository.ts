/**
 * The batch queries that steer a batch and decide who may: a batch with its owner's level, its control
 * (pause, resume, discard), the pause of an owner's or a key's batches when their standing goes, the
 * standing check a chunk makes under lock, and the client-run batches of the spec's browser loop.
 */
import type { UserLevel } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { BatchItemRow, BatchRow, DB } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export type BatchWithOwner = BatchRow & { owner_level: UserLevel | null };

/** A batch with the current level of the user who started it (null: the system, or no such user). */
export async function findBatchWithOwner(db: Db, id: number): Promise<BatchWithOwner | undefined> {
  return db
    .selectFrom('batches')
    .leftJoin('users', 'users.id', 'batches.user_id')
    .selectAll('batches')
    .select('users.userlevel as owner_level')
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

/** Up to `limit` processed rows after S.No. `offset`, in S.No. order. */
export async function listBatchItems(
  db: Db,
  batchId: number,
  offset: number,
  limit: number,
): Promise<BatchItemRow[]> {
  return db
    .selectFrom('batch_items')
    .selectAll()
    .where('batch_id', '=', batchId)
    .where('seq', '>', offset)
    .orderBy('seq')
    .limit(limit)
    .execute();
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
 * rest of the batch runs under (its commands' user and key): see BatchService.resume.
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
    .set({ status: 'cancelled', paused: true, completed_at: sql<Date>`now()` as unknown as Date })
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
      updated_at: sql<Date>`now()` as unknown as Date,
      ...(progress.complete
        ? { status: 'complete' as const, completed_at: sql<Date>`now()` as unknown as Date }
        : {}),
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
      ...(batch.complete ? { completed_at: sql<Date>`now()` as unknown as Date } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}
