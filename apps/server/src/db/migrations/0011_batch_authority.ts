import { type Kysely, sql } from 'kysely';

/**
 * Why the server paused a batch on its own (its owner's account was disabled, or the API key that
 * started it was deactivated): shown on the resume card and in the Reports history, and what tells a
 * resume that the batch must go on under the identity of whoever resumes it (see batches/service.ts).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE batches ADD COLUMN IF NOT EXISTS paused_reason text`.execute(db);
}
