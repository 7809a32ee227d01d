import { type Kysely, sql } from 'kysely';

/**
 * `batch_items.processed_at` was written for every row of every batch and read by nothing: the batch's
 * own times (started, updated, completed) say when it ran. Dropping it makes each chunk's insert smaller.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE batch_items DROP COLUMN processed_at`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
