/**
 * The queries behind the uploaded batch files: the batch a history link names, and the record that a
 * file was deleted after UPLOAD_RETENTION (migration 0015).
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export interface UploadRow {
  id: number;
  user_id: number | null;
  file_name: string | null;
  created_at: Date;
  file_removed_at: Date | null;
}

/** The batch whose stored file is `stored` (`<feature>/<name>`, as the history links it). */
export async function findUploadBatch(db: Db, stored: string): Promise<UploadRow | undefined> {
  return db
    .selectFrom('batches')
    .select(['id', 'user_id', 'file_name', 'created_at', 'file_removed_at'])
    .where('stored_file', '=', stored)
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** Records that the files `stored` were deleted (those not recorded yet). Returns how many batches. */
export async function markFilesRemoved(db: Db, stored: readonly string[]): Promise<number> {
  let marked = 0;
  for (let i = 0; i < stored.length; i += 1000) {
    const result = await db
      .updateTable('batches')
      .set({ file_removed_at: sql<Date>`now()` as unknown as Date })
      .where('stored_file', 'in', stored.slice(i, i + 1000))
      .where('file_removed_at', 'is', null)
      .executeTakeFirst();
    marked += Number(result.numUpdatedRows);
  }
  return marked;
}
