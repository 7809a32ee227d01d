/**
 * Test databases: a copy of the migrated PGlite template per test file, and, when PostgreSQL answers,
 * a fresh database created from the migrated template there. Suites run once per available kind.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { inject } from 'vitest';
import { type Database, type DatabaseKind, openDatabase } from '../src/db/database';
import { enforceRowSecurity } from '../src/db/roles';
import type { DB } from '../src/db/types';

export interface TestDatabase extends Database {
  /** Connection URL (PostgreSQL) or data dir (PGlite), for tests that start a server process. */
  readonly location: { databaseUrl?: string; dataDir: string };
}

/** The database kinds this run can test on: always PGlite, PostgreSQL when it answers. */
export function databaseKinds(): DatabaseKind[] {
  return inject('postgresUrl') ? ['pglite', 'postgres'] : ['pglite'];
}

export async function openTestDatabase(kind: DatabaseKind): Promise<TestDatabase> {
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-test-'));
    cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
    const database = await openDatabase({ dataDir });
    // As the server does: subject to row-level security (the template has the role's grants).
    await enforceRowSecurity(database, { grant: false });
    return {
      ...database,
      location: { dataDir },
      close: async () => {
        await database.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const adminUrl = inject('postgresUrl');
  const template = inject('postgresTemplate');
  if (!adminUrl || !template) throw new Error('PostgreSQL is not available in this run');
  const name = `lendlock_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolSize: 5 });
  await enforceRowSecurity(database, { grant: false });
  return {
    ...database,
    location: { databaseUrl: url.toString(), dataDir: mkdtempSync(join(tmpdir(), 'lendlock-pgtest-')) },
    close: async () => {
      await database.close();
      const drop = new pg.Client({ connectionString: adminUrl });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    },
  };
}

/** A database with no schema at all (migration tests migrate it step by step). */
export async function openEmptyTestDatabase(kind: DatabaseKind): Promise<Database> {
  if (kind === 'pglite') {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-empty-'));
    const database = await openDatabase({ dataDir });
    return {
      ...database,
      close: async () => {
        await database.close();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  }
  const adminUrl = inject('postgresUrl');
  if (!adminUrl) throw new Error('PostgreSQL is not available in this run');
  const name = `lendlock_e_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE template0`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', poolSize: 2 });
  return {
    ...database,
    close: async () => {
      await database.close();
      const drop = new pg.Client({ connectionString: adminUrl });
      await drop.connect();
      await drop.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await drop.end();
    },
  };
}

/** The device channels this run can test: always the embedded broker, an external one (Mosquitto) when it answers. */
export function channelKinds(): ('embedded' | 'mosquitto')[] {
  return inject('mqttUrl') ? ['embedded', 'mosquitto'] : ['embedded'];
}

/**
 * Every row of `tables`, hashed (count and md5 of the content, per table): what a refused call must leave
 * as it was. The authorization matrix and the hostile-input fuzzing compare it before and after.
 */
export async function fingerprint(db: Kysely<DB>, tables: readonly string[]): Promise<string> {
  const parts = await Promise.all(
    tables.map(async (table) => {
      const row = await sql<{
        h: string | null;
        n: number;
      }>`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h, count(*)::int AS n FROM ${sql.table(table)} t`.execute(
        db,
      );
      return `${table}:${row.rows[0]?.n}:${row.rows[0]?.h}`;
    }),
  );
  return parts.join(',');
}
