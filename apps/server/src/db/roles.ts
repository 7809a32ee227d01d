/**
 * Two database roles (docs/operations.md § Database roles): an owner that runs the migrations, and the
 * application's role, which owns nothing and holds only the grants below. So the application cannot alter
 * a table: neither disable the audit log's append-only triggers nor drop them, and on `audit_log` and
 * `audit_chain` it may only INSERT and SELECT. PGlite (one embedded user) and a single DATABASE_URL
 * migrate as the application's role, as before.
 */
import { type Kysely, sql } from 'kysely';
import { type Database, migrate, openDatabase } from './database';
import type { DB } from './types';

/** Tables the application may only append to and read. */
export const APPEND_ONLY_TABLES = ['audit_log', 'audit_chain'] as const;

async function currentRole(db: Kysely<DB>): Promise<string> {
  const row = await sql<{ role: string }>`SELECT current_user AS role`.execute(db);
  return row.rows[0]?.role ?? '';
}

/** Grants `role` what the application needs on every table of the current schema, no more. */
export async function grantApplicationRole(owner: Kysely<DB>, role: string): Promise<void> {
  const schema =
    (await sql<{ s: string }>`SELECT current_schema() AS s`.execute(owner)).rows[0]?.s ?? 'public';
  const r = sql.id(role);
  const s = sql.id(schema);
  await sql`GRANT USAGE ON SCHEMA ${s} TO ${r}`.execute(owner);
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`.execute(owner);
  await sql`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`.execute(owner);
  for (const table of APPEND_ONLY_TABLES) {
    await sql`REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ${sql.id(schema, table)} FROM ${r}`.execute(
      owner,
    );
  }
}

export interface SchemaOptions {
  databaseUrl: string | undefined;
  databaseOwnerUrl: string | undefined;
}

/**
 * Brings the schema up to date: as the owner role when DATABASE_OWNER_URL is set (then grants the
 * application's role), else as the application's own connection. Returns the migrations applied.
 */
export async function prepareSchema(options: SchemaOptions, database: Database): Promise<string[]> {
  if (!options.databaseOwnerUrl) return migrate(database.db);
  if (!options.databaseUrl || database.kind !== 'postgres')
    throw new Error('DATABASE_OWNER_URL needs DATABASE_URL: the application connects as another role');
  const appRole = await currentRole(database.db);
  const owner = await openDatabase({
    databaseUrl: options.databaseOwnerUrl,
    dataDir: '',
    poolSize: 1,
    preparedStatements: false,
  });
  try {
    const ownerRole = await currentRole(owner.db);
    if (ownerRole === appRole)
      throw new Error(
        `DATABASE_OWNER_URL and DATABASE_URL sign in as the same role (${appRole}): the application's role must be another one, owning nothing`,
      );
    const applied = await migrate(owner.db);
    await grantApplicationRole(owner.db, appRole);
    return applied;
  } finally {
    await owner.close();
  }
}

/** Whether the connection's role owns `audit_log` (and so could disable its triggers). */
export async function ownsAuditLog(db: Kysely<DB>): Promise<boolean> {
  const row = await sql<{ owns: boolean }>`
    SELECT pg_get_userbyid(c.relowner) = current_user AS owns
    FROM pg_class c WHERE c.oid = to_regclass('audit_log')`.execute(db);
  return row.rows[0]?.owns === true;
}
