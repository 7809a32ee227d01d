/**
 * 0040: sessions end when unused for SESSION_IDLE_TIMEOUT, besides their absolute expiry. `last_used_at`
 * is when a request last used the session, written at most once a minute per session (so the check
 * allows that minute): modules/auth/repository.ts. Sessions open at the migration start their idle time
 * then. `sessions` keeps its row-level security (0032): the column is the row's.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE sessions ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now()`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
