import { type Kysely, sql } from 'kysely';

/**
 * The Batches screen reads a batch's results in pages by S.No., filtered by found / not found
 * / reason, and lists each user's batches newest first. The primary key (batch_id, seq) serves all rows
 * and the found ones (most rows of a batch); these partial indexes hold the not found rows only (of any
 * reason, and by reason), so the first page of a 200,000-row batch's not found rows reads a page of index,
 * not the batch, while a batch's chunk writes no index entry for a found row. `batches_user` serves a
 * USER's own list.
 */
const STATEMENTS = [
  `CREATE INDEX batch_items_not_found ON batch_items (batch_id, seq) WHERE result = 'not found'`,
  `CREATE INDEX batch_items_not_found_note ON batch_items (batch_id, note, seq) WHERE result = 'not found'`,
  `CREATE INDEX batches_user ON batches (user_id, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
