import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz`,
  `CREATE INDEX api_keys_user ON api_keys (user_id)`,
  `CREATE TABLE password_resets (
    token_hash text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz,
    used_reason text
  )`,
  `CREATE INDEX password_resets_user_open ON password_resets (user_id) WHERE used_at IS NULL`,
];

/** Key last-use time; single-use, hashed, expiring password reset tokens. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
