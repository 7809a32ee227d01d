/**
 * The queries behind the uploaded batch files: the batch a history link names, and the record that a
 * file was deleted after UPLOAD_RETENTION (migration 0015).
 */
import type { UserLevel } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export interface UploadRow {
  id: number;
  command: string;
  user_id: number | null;
  /** The current level and tenant of the user who uploaded it. */
  owner_level: UserLevel | null;
  owner_retailer_phone: string | null;
  file_name: string | null;
  created_at: Date;
  file_removed_at: Date | null;
}

/** The batch whose stored file is `stored` (`<feature>/<name>`, as the history links it), with its owner. */
export async function findUploadBatch(db: Db, stored: string): Promise<UploadRow | undefined> {
  return db
    .selectFrom('batches')
    .leftJoin('users', 'users.id', 'batches.user_id')
    .select([
      'batches.id',
      'batches.command',
      'batches.user_id',
      'users.userlevel as owner_level',
      'users.retailer_phone as owner_retailer_phone',
      'batches.file_name',
      'batches.created_at',
      'batches.file_removed_at',
    ])
    .where('batches.stored_file', '=', stored)
    .orderBy('batches.id', 'desc')
    .executeTakeFirst();
}

/** Records that the files `stored` were deleted (those not recorded yet). Returns how many batches. */
export async function markFilesRemoved(db: Db, stored: readonly string[]): Promise<number> {
  let marked = 0;
  for (let i = 0; i < stored.length; i += 1000) {
    const result = await db
      .updateTable('batches')
      .set({ file_removed_at: sql<Date>`now()` })
      .where('stored_file', 'in', stored.slice(i, i + 1000))
      .where('file_removed_at', 'is', null)
      .executeTakeFirst();
    marked += Number(result.numUpdatedRows);
  }
  return marked;
}
