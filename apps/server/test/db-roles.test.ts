/**
 * Two database roles on PostgreSQL: migrations run as an owner role, the application as
 * a role that owns nothing. The application's role works (sign-in, audit rows, sealing, search) and
 * cannot silence the audit log: no UPDATE, DELETE or TRUNCATE, no disabling or dropping its triggers, no
 * session_replication_role. Throwaway roles and a throwaway database, dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Database, openDatabase } from '../src/db/database';
import { up as migrationsOwnerOnly } from '../src/db/migrations/0038_migrations_owner_only';
import { ownsAuditLog, prepareSchema } from '../src/db/roles';
import { appendAudit, verifyAuditChain } from '../src/modules/audit/repository';
import { AuditSealer } from '../src/modules/audit/sealer';
import { databaseKinds, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

const postgres = databaseKinds().includes('postgres');

describe.skipIf(!postgres)('the application role on PostgreSQL', () => {
  const suffix = randomBytes(4).toString('hex');
  const owner = `lendlock_owner_${suffix}`;
  const appRole = `lendlock_app_${suffix}`;
  const name = `lendlock_roles_${suffix}`;
  let admin: pg.Client;
  let app: Database;
  let ownerUrl: string;
  let appUrl: string;

  const urlFor = (role: string) => {
    const url = new URL(inject('postgresUrl') as string);
    url.username = role;
    url.pathname = `/${name}`;
    return url.toString();
  };

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: inject('postgresUrl') as string });
    await admin.connect();
    await admin.query(`CREATE ROLE ${owner} LOGIN`);
    await admin.query(`CREATE ROLE ${appRole} LOGIN`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${owner}`);
    ownerUrl = urlFor(owner);
    appUrl = urlFor(appRole);
    app = await openDatabase({ databaseUrl: appUrl, dataDir: '', poolSize: 3 });
    await prepareSchema({ databaseUrl: appUrl, databaseOwnerUrl: ownerUrl }, app);
  }, 120_000);

  afterAll(async () => {
    await app?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.query(`DROP ROLE IF EXISTS ${appRole}`);
    await admin.query(`DROP ROLE IF EXISTS ${owner}`);
    await admin.end();
  });

  it('owns nothing, and serves: sign-in, audit rows, sealing and the search', async () => {
    expect(await ownsAuditLog(app.db)).toBe(false);
    const owned = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_class WHERE relowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)`.execute(
      app.db,
    );
    expect(owned.rows[0]?.n).toBe(0);
    const database = {
      ...app,
      location: { databaseUrl: appUrl, dataDir: mkdtempSync(join(tmpdir(), 'lendlock-roles-')) },
    };
    const server = await buildTestApp(database as TestDatabase);
    try {
      const session = await loginAs(
        server,
        await buildUser(database as TestDatabase, { userlevel: 'SUPERADMIN' }),
      );
      const search = await server.inject({
        method: 'POST',
        url: '/api/v2/audit/search',
        headers: { 'x-api-key': session.token },
        payload: { action: 'login' },
      });
      expect(search.statusCode).toBe(200);
      expect(search.json().total).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
    await appendAudit(app.db, { actor: { label: 'test' }, action: 'roles.check', result: 'success' });
    await new AuditSealer({ db: app.db, log: { warn() {} } as never }).sealNow(true);
    expect(await verifyAuditChain(app.db)).toMatchObject({ broken: null, unsealed: 0 });
  });

  it.each([
    ['UPDATE', sql`UPDATE audit_log SET result = 'x'`, /permission denied/],
    ['DELETE', sql`DELETE FROM audit_log`, /permission denied/],
    ['TRUNCATE', sql`TRUNCATE audit_log`, /permission denied/],
    ['TRUNCATE the chain', sql`TRUNCATE audit_chain`, /permission denied/],
    ['UPDATE the chain', sql`UPDATE audit_chain SET hash = 'x'`, /permission denied/],
    ['DISABLE TRIGGER', sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`, /must be owner/],
    ['DISABLE TRIGGER ALL', sql`ALTER TABLE audit_log DISABLE TRIGGER ALL`, /must be owner/],
    ['DROP TRIGGER', sql`DROP TRIGGER audit_log_no_update ON audit_log`, /must be owner/],
    ['DROP TABLE', sql`DROP TABLE audit_log`, /must be owner/],
    ['session_replication_role', sql`SET session_replication_role = replica`, /permission denied/],
  ])('refuses %s to the application role, changing nothing', async (_label, statement, error) => {
    const before = await sql`SELECT md5(string_agg(t::text, '|' ORDER BY id)) AS h FROM audit_log t`.execute(
      app.db,
    );
    await expect(statement.execute(app.db)).rejects.toThrow(error);
    const after = await sql`SELECT md5(string_agg(t::text, '|' ORDER BY id)) AS h FROM audit_log t`.execute(
      app.db,
    );
    expect(after.rows).toEqual(before.rows);
    const triggers = await sql<{ tgenabled: string }>`
      SELECT tgenabled FROM pg_trigger WHERE tgrelid = 'audit_log'::regclass AND NOT tgisinternal`.execute(
      app.db,
    );
    // 'A': enabled ALWAYS (fires whatever session_replication_role says).
    expect(triggers.rows.map((t) => t.tgenabled)).toEqual(['A', 'A']);
  });

  const migrationRows = async () =>
    (await sql<{ name: string }>`SELECT name FROM schema_migrations ORDER BY name`.execute(app.db)).rows;
  const migrationWrites = [
    ['INSERT', sql`INSERT INTO schema_migrations (name, timestamp) VALUES ('9999_fake', 'now')`],
    ['DELETE', sql`DELETE FROM schema_migrations WHERE name = '0038_migrations_owner_only'`],
    ['UPDATE', sql`UPDATE schema_migrations SET name = 'x' WHERE name = '0001_foundation'`],
    ['TRUNCATE', sql`TRUNCATE schema_migrations`],
    ['UPDATE the lock', sql`UPDATE schema_migrations_lock SET is_locked = 1`],
  ] as const;

  it.each(migrationWrites)(
    'refuses %s on the migrations table to the application role',
    async (_label, statement) => {
      const before = await migrationRows();
      expect(before.map((r) => r.name)).toContain('0038_migrations_owner_only');
      await expect(statement.execute(app.db)).rejects.toThrow(/permission denied/);
      expect(await migrationRows()).toEqual(before);
    },
  );

  it('the migration takes the writes back from a database granted them before it', async () => {
    const ownerDb = await openDatabase({ databaseUrl: ownerUrl, dataDir: '', poolSize: 1 });
    try {
      // As db/roles.ts granted every table before: the application could write the migrations table.
      await sql`GRANT INSERT, UPDATE, DELETE, TRUNCATE ON schema_migrations, schema_migrations_lock TO ${sql.id(appRole)}`.execute(
        ownerDb.db,
      );
      const before = await migrationRows();
      await sql`INSERT INTO schema_migrations (name, timestamp) VALUES ('9999_fake', 'now')`.execute(app.db);
      await sql`DELETE FROM schema_migrations WHERE name = '9999_fake'`.execute(app.db);
      await migrationsOwnerOnly(ownerDb.db as unknown as Kysely<unknown>);
      for (const [, statement] of migrationWrites) {
        await expect(statement.execute(app.db)).rejects.toThrow(/permission denied/);
      }
      expect(await migrationRows()).toEqual(before);
    } finally {
      await ownerDb.close();
    }
  });

  it('refuses to start with the same role for both URLs', async () => {
    await expect(prepareSchema({ databaseUrl: appUrl, databaseOwnerUrl: appUrl }, app)).rejects.toThrow(
      /sign in as the same role/,
    );
  });
});
