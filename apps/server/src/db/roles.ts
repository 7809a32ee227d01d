/**
 * Two database roles (docs/operations.md § Database roles): an owner that runs the migrations, and the
 * application's role, which owns nothing and holds only the grants below. So the application cannot alter
 * a table: neither disable the audit log's append-only triggers nor drop them, and on `audit_log`,
 * `audit_chain` and `audit_anchors` it may only INSERT and SELECT. PGlite (one embedded user) and a single DATABASE_URL
 * migrate as the application's role, as before.
 */
import { type Kysely, sql } from 'kysely';
import { type Database, migrate, openDatabase } from './database';
import { inTransaction } from './transaction';
import type { DB } from './types';

/** Tables the application may only append to and read. */
export const APPEND_ONLY_TABLES = ['audit_log', 'audit_chain', 'audit_anchors'] as const;

/** The migrations' bookkeeping: written by the owner only, read by the application. */
const MIGRATION_TABLES = ['schema_migrations', 'schema_migrations_lock'] as const;

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
  // GRANTs of two servers starting at once on one database would clash ("tuple concurrently updated"):
  // one at a time (advisory locks are per database, like the grants).
  await inTransaction(owner, async (trx) => {
    await sql`SELECT pg_advisory_xact_lock(${GRANT_LOCK})`.execute(trx);
    await grantAll(trx, r, s, schema);
  });
}

/** The advisory lock taken while granting (an arbitrary key of ours). */
const GRANT_LOCK = 26_032;

async function grantAll(
  owner: Kysely<DB>,
  r: ReturnType<typeof sql.id>,
  s: ReturnType<typeof sql.id>,
  schema: string,
): Promise<void> {
  await sql`GRANT USAGE ON SCHEMA ${s} TO ${r}`.execute(owner);
  await sql`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${s} TO ${r}`.execute(owner);
  await sql`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA ${s} TO ${r}`.execute(owner);
  for (const table of APPEND_ONLY_TABLES) {
    await sql`REVOKE UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER ON ${sql.id(schema, table)} FROM ${r}`.execute(
      owner,
    );
  }
  for (const table of MIGRATION_TABLES) {
    await sql`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ${sql.id(schema, table)} FROM ${r}`.execute(owner);
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
  if (!options.databaseOwnerUrl) {
    const applied = await migrate(database.db);
    await enforceRowSecurity(database);
    return applied;
  }
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
    await enforceRowSecurity(database);
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

/**
 * The role the application takes when the one it signs in as ignores row-level security (a superuser, as
 * PGlite's one user and the tests' `postgres`, or a BYPASSRLS role): NOLOGIN, owning nothing, with the
 * application's grants (docs/operations.md § Database roles, docs/adr/0011).
 */
export const TENANT_ROLE = 'lendlock_tenant';

/** Whether the connection's role ignores row-level security, FORCE or not (superuser or BYPASSRLS). */
export async function bypassesRowSecurity(db: Kysely<DB>): Promise<boolean> {
  const row = await sql<{ bypass: boolean }>`
    SELECT rolsuper OR rolbypassrls AS bypass FROM pg_roles WHERE rolname = current_user`.execute(db);
  return row.rows[0]?.bypass === true;
}

/**
 * Creates TENANT_ROLE unless it exists. Role names are cluster-wide: test files (and servers) in parallel
 * may create it at the same moment, and the loser's error is the winner's success.
 */
async function ensureTenantRole(db: Kysely<DB>): Promise<void> {
  await sql
    .raw(`DO $$ BEGIN
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '${TENANT_ROLE}') THEN
        CREATE ROLE ${TENANT_ROLE} NOLOGIN;
      END IF;
    EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
    END $$`)
    .execute(db);
}

/**
 * Makes the application subject to row-level security: when the role it signs in as bypasses it, every
 * connection takes TENANT_ROLE instead (SET ROLE), after it is created and granted (`grant`: false when
 * the database was copied from a template that has the grants already). A role already subject to it
 * (the application's role under DATABASE_OWNER_URL, a non-superuser owner) is left as it is.
 */
export async function enforceRowSecurity(database: Database, { grant = true } = {}): Promise<void> {
  if (!(await bypassesRowSecurity(database.db))) return;
  await ensureTenantRole(database.db);
  if (grant) await grantApplicationRole(database.db, TENANT_ROLE);
  database.useRole(TENANT_ROLE);
}

/**
 * The startup check: refuses (throws) when row-level security is not in force for the application's
 * connections, that is when they would see every tenant's rows whatever the tenant (a BYPASSRLS or
 * superuser role that could not take TENANT_ROLE).
 */
export async function assertRowSecurity(db: Kysely<DB>): Promise<void> {
  const row = await sql<{ active: boolean; role: string }>`
    SELECT row_security_active('devices') AS active, current_user AS role`.execute(db);
  const { active, role } = row.rows[0] ?? { active: false, role: '?' };
  if (!active)
    throw new Error(
      `row-level security is not in force for the database role ${role}: it must be neither a superuser nor BYPASSRLS, or be able to SET ROLE ${TENANT_ROLE} (docs/operations.md § Database roles)`,
    );
}
