/**
 * Databases for the benchmarks: a fresh PostgreSQL database per benchmark (created, migrated, dropped
 * afterwards), or a fresh PGlite directory, seeded before the server starts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { type Database, migrate, openDatabase } from '../../apps/server/src/db/database';
import type { DB } from '../../apps/server/src/db/types';
import { onInterrupt, randomSuffix } from './server';

export const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MQTT_URL = process.env.BENCH_MQTT_URL ?? 'mqtt://127.0.0.1:1883';

export async function adminQuery<T extends pg.QueryResultRow = pg.QueryResultRow>(
  text: string,
): Promise<pg.QueryResult<T>> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await client.query<T>(text);
  } finally {
    await client.end();
  }
}

export interface BenchDatabase {
  /** DATABASE_URL for PostgreSQL; null for PGlite. */
  url: string | null;
  /** DATA_DIR of the server (PGlite lives in DATA_DIR/pgdata). */
  dataDir: string;
  /** Opens it from the benchmark (PGlite: only while the server is not running). */
  open(): Promise<Database>;
  drop(): Promise<void>;
}

/** A new, migrated PostgreSQL database. */
export async function createPostgres(label: string): Promise<BenchDatabase> {
  const name = `lendlock_bench_${label}_${randomSuffix()}`;
  await adminQuery(`CREATE DATABASE ${name}`);
  if (process.env.BENCH_AUTO_EXPLAIN) {
    // Diagnosis: plans of statements slower than this many ms go to PostgreSQL's log.
    await adminQuery(`ALTER DATABASE ${name} SET session_preload_libraries = 'auto_explain'`);
    await adminQuery(
      `ALTER DATABASE ${name} SET auto_explain.log_min_duration = '${Number(process.env.BENCH_AUTO_EXPLAIN)}ms'`,
    );
  }
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const dataDir = mkdtempSync(join(tmpdir(), `lendlock-bench-${label}-`));
  const remove = async () => {
    await adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const forget = onInterrupt(remove);
  const database = await openDatabase({ databaseUrl: url.toString(), dataDir, poolSize: 4 });
  await migrate(database.db);
  await database.close();
  return {
    url: url.toString(),
    dataDir,
    open: () => openDatabase({ databaseUrl: url.toString(), dataDir, poolSize: 4 }),
    drop: async () => {
      forget();
      if (process.env.BENCH_KEEP_SCALE_DB && label === 'scale') {
        console.log(`  kept ${name} (BENCH_SCALE_DB=${name} reuses it)`);
        return;
      }
      await remove();
    },
  };
}

/** A database that exists already (kept from an earlier run); `drop` leaves it. */
export function existingPostgres(url: string): BenchDatabase {
  const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-bench-kept-'));
  return {
    url,
    dataDir,
    open: () => openDatabase({ databaseUrl: url, dataDir, poolSize: 4 }),
    drop: async () => rmSync(dataDir, { recursive: true, force: true }),
  };
}

/** A new, migrated PGlite directory (the embedded default). */
export async function createPglite(label: string): Promise<BenchDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), `lendlock-bench-${label}-`));
  const remove = async () => rmSync(dataDir, { recursive: true, force: true });
  const forget = onInterrupt(remove);
  const database = await openDatabase({ dataDir });
  await migrate(database.db);
  await database.close();
  return {
    url: null,
    dataDir,
    open: () => openDatabase({ dataDir }),
    drop: async () => {
      forget();
      await remove();
    },
  };
}

/** Registers devices straight in the database (as a fleet that registered earlier would have). */
export async function seedDevices(db: Kysely<DB>, imeis: readonly string[]): Promise<void> {
  for (let i = 0; i < imeis.length; i += 10_000) {
    const slice = imeis.slice(i, i + 10_000);
    await sql`
      INSERT INTO devices (imei1, manufacturer, brand, model, appversion, apptype, match_status)
      SELECT imei, 'Samsung Electronics', 'Samsung', 'Galaxy A15', '3.2.1', 'DEVICE_OWNER', 'YES'
      FROM unnest(${slice}::text[]) AS imei`.execute(db);
    await sql`
      INSERT INTO registrations (imei1, match_status, registration_status, manufacturer, brand, model, appversion, apptype)
      SELECT imei, 'YES', 'REGISTERED', 'Samsung Electronics', 'Samsung', 'Galaxy A15', '3.2.1', 'DEVICE_OWNER'
      FROM unnest(${slice}::text[]) AS imei`.execute(db);
  }
  // A database that has held these devices for a while has statistics on them.
  await sql`ANALYZE devices`.execute(db);
  await sql`ANALYZE registrations`.execute(db);
}

export async function withDatabase<T>(
  database: BenchDatabase,
  fn: (db: Kysely<DB>) => Promise<T>,
): Promise<T> {
  const opened = await database.open();
  try {
    return await fn(opened.db);
  } finally {
    await opened.close();
  }
}
