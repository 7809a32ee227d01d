import { type Kysely, sql } from 'kysely';

/**
 * Uploaded batch files are kept UPLOAD_RETENTION (90 days by default), then the uploads sweep deletes
 * them. The batch row records when its file went, so the history link can answer 410 with the reason
 * instead of a bare 404. The history link finds a batch by its stored file (index), and the sweep finds
 * the batches whose file is still there and old enough (partial index, small: only files still kept).
 */
const STATEMENTS = [
  `ALTER TABLE batches ADD COLUMN file_removed_at timestamptz`,
  `CREATE INDEX batches_stored_file ON batches (stored_file) WHERE stored_file IS NOT NULL`,
  `CREATE INDEX batches_files_kept ON batches (created_at)
     WHERE stored_file IS NOT NULL AND file_removed_at IS NULL`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
