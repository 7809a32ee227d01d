/**
 * Once per `vitest run`: migrate one PGlite template (cached by the migrations' hash) and, when
 * PostgreSQL answers, one template database there. Test files copy these instead of migrating.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { migrate, openDatabase } from '../src/db/database';
import { enforceRowSecurity } from '../src/db/roles';

const here = fileURLToPath(new URL('.', import.meta.url));
const migrationsDir = resolve(here, '../src/db/migrations');
const rolesFile = resolve(here, '../src/db/roles.ts');
const cacheDir = resolve(here, '../../../node_modules/.cache/lendlock');

export const DEFAULT_TEST_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

function migrationsHash(): string {
  const hash = createHash('sha256');
  for (const name of readdirSync(migrationsDir).sort())
    hash.update(name).update(readFileSync(join(migrationsDir, name)));
  // The templates carry the grants of the role subject to row-level security too.
  hash.update(readFileSync(rolesFile));
  return hash.digest('hex').slice(0, 12);
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1500 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

async function pgliteTemplate(hash: string): Promise<string> {
  const dir = join(cacheDir, `pglite-template-${hash}`);
  if (existsSync(join(dir, 'pgdata', 'PG_VERSION'))) return dir;
  const building = `${dir}.building-${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true });
  const database = await openDatabase({ dataDir: building });
  await migrate(database.db);
  await enforceRowSecurity(database);
  await database.close();
  rmSync(dir, { recursive: true, force: true });
  renameSync(building, dir);
  return dir;
}

async function postgresTemplate(url: string, hash: string): Promise<string> {
  const name = `lendlock_template_${hash}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      const building = `${name}_building`;
      await admin.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${building}`);
      const target = new URL(url);
      target.pathname = `/${building}`;
      const database = await openDatabase({ databaseUrl: target.toString(), dataDir: '' });
      await migrate(database.db);
      await enforceRowSecurity(database);
      await database.close();
      await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`);
    }
    return name;
  } finally {
    await admin.end();
  }
}

/** Whether an MQTT broker answers (a TCP connect is enough to decide; the tests then speak MQTT to it). */
async function brokerAnswers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  const { createConnection } = await import('node:net');
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 1883) });
    socket.setTimeout(1000);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

export const DEFAULT_TEST_MQTT_URL = 'mqtt://127.0.0.1:1883';

declare module 'vitest' {
  export interface ProvidedContext {
    mqttUrl: string | null;
    pgliteTemplateDir: string;
    postgresUrl: string | null;
    postgresTemplate: string | null;
  }
}

export default async function setup(project: TestProject): Promise<void> {
  const hash = migrationsHash();
  project.provide('pgliteTemplateDir', await pgliteTemplate(hash));
  const url = process.env.TEST_DATABASE_URL ?? DEFAULT_TEST_DATABASE_URL;
  const available = await postgresAnswers(url);
  if (!available && process.env.TEST_DATABASE_URL) {
    throw new Error(`TEST_DATABASE_URL is set but PostgreSQL does not answer at ${url}`);
  }
  project.provide('postgresUrl', available ? url : null);
  project.provide('postgresTemplate', available ? await postgresTemplate(url, hash) : null);
  const mqttUrl = process.env.TEST_MQTT_URL ?? DEFAULT_TEST_MQTT_URL;
  const mqttAvailable = await brokerAnswers(mqttUrl);
  if (!mqttAvailable && process.env.TEST_MQTT_URL)
    throw new Error(`TEST_MQTT_URL is set but no broker answers at ${mqttUrl}`);
  project.provide('mqttUrl', mqttAvailable ? mqttUrl : null);
}
