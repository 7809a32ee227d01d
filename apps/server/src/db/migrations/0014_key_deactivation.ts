import { type Kysely, sql } from 'kysely';

/**
 * Who switched a key off, at which level and why (keys follow their owner's account). The
 * level is the lowest that may switch it on again, so a key an ADMIN, a SUPERADMIN, a disable or a password
 * reset turned off cannot be turned back on by its owner alone. Keys already inactive keep null: nothing
 * was recorded for them, and anyone who may change them still may.
 */
const STATEMENTS = [
  `ALTER TABLE api_keys
     ADD COLUMN deactivated_at timestamptz,
     ADD COLUMN deactivated_by integer REFERENCES users (id),
     ADD COLUMN deactivated_by_level text
       CHECK (deactivated_by_level IN ('USER', 'ADMIN', 'SUPERADMIN')),
     ADD COLUMN deactivated_reason text
       CHECK (deactivated_reason IN ('manual', 'password reset', 'account disabled', 'forced logout'))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
