/**
 * PostgreSQL restarted in the middle of a batch: during the outage calls get a clear 503 (never a stack
 * trace), readiness says so, and once the database is back the batch goes on; every IMEI exactly once.
 * Runs on a private PostgreSQL cluster (Debian's binaries) that this test may stop at will.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { imeiFor } from '@lendlock/device-sim';
import { freePort } from '@lendlock/testkit';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type Database, migrate, openDatabase } from '../src/db/database';
import type { TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

const binDir = (() => {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const version = readdirSync(root).sort().at(-1);
  return version ? join(root, version, 'bin') : null;
})();
const usable = binDir !== null && process.getuid?.() === 0 && spawnSync('id', ['postgres']).status === 0;

const asPostgres = (command: string, args: string[]) =>
  execFileSync('runuser', ['-u', 'postgres', '--', join(binDir as string, command), ...args], {
    stdio: 'pipe',
  });

describe.runIf(usable)('PostgreSQL restarted mid-batch', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lendlock-pg-'));
  let port = 0;
  let database: Database | undefined;
  let app: FastifyInstance | undefined;
  const pgctl = (action: 'start' | 'stop') =>
    asPostgres('pg_ctl', [
      '-D',
      join(dir, 'data'),
      '-w',
      '-m',
      'fast',
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-l',
      join(dir, 'log'),
      action,
    ]);

  afterAll(async () => {
    await app?.close().catch(() => {});
    await database?.close().catch(() => {});
    try {
      pgctl('stop');
    } catch {}
    rmSync(dir, { recursive: true, force: true });
  });

  it('answers 503 during the outage and finishes the batch afterwards, exactly once', {
    timeout: 180_000,
  }, async () => {
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres']).toString()),
      Number(execFileSync('id', ['-g', 'postgres']).toString()),
    );
    port = await freePort();
    asPostgres('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
    pgctl('start');
    const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
    database = await openDatabase({ databaseUrl: url, dataDir: dir, poolSize: 5 });
    await migrate(database.db);
    const rows = 12_000;
    const imeis = Array.from({ length: rows }, (_, i) => imeiFor(77, i));
    for (let i = 0; i < rows; i += 2000) {
      await database.db
        .insertInto('devices')
        .values(
          imeis.slice(i, i + 2000).map((imei1) => ({ imei1, imei2: null, match_status: 'YES' as const })),
        )
        .execute();
    }
    const testDb = { ...database, location: { databaseUrl: url, dataDir: dir } } as TestDatabase;
    app = await buildTestApp(testDb, { batchWorkers: 1 });
    const session = await loginAs(app, await buildUser(testDb, { userlevel: 'ADMIN' }));
    const body = multipart({}, { name: 'outage.csv', type: 'text/csv', content: imeiCsv(imeis) });
    const upload = await app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': session.token },
      payload: body.payload,
    });
    const { batchId } = upload.json();
    const processed = async () =>
      Number(
        (
          await sql<{ n: number }>`SELECT processed AS n FROM batches WHERE id = ${batchId}`.execute(
            database?.db as never,
          )
        ).rows[0]?.n,
      );
    await vi.waitFor(async () => expect(await processed()).toBeGreaterThan(1000), {
      timeout: 60_000,
      interval: 50,
    });

    pgctl('stop');
    const during = await app.inject({
      method: 'POST',
      url: '/api/devicedetails.php',
      headers: { 'x-api-key': session.token },
      payload: { imei: imeis[0] },
    });
    expect(during.statusCode).toBe(503);
    expect(during.json()).toEqual({
      status: 'error',
      code: 'UNAVAILABLE',
      message: 'The service is temporarily unavailable. Please try again shortly.',
    });
    expect(during.body).not.toMatch(/at .*\.(ts|js):\d+/);
    expect((await app.inject('/readyz')).statusCode).toBe(503);
    await new Promise((r) => setTimeout(r, 2000));
    pgctl('start');

    await vi.waitFor(async () => expect((await app?.inject('/readyz'))?.statusCode).toBe(200), {
      timeout: 30_000,
      interval: 200,
    });
    await vi.waitFor(
      async () => {
        const { rows: state } = await sql<{
          status: string;
        }>`SELECT status FROM batches WHERE id = ${batchId}`.execute(database?.db as never);
        expect(state[0]?.status).toBe('complete');
      },
      { timeout: 120_000, interval: 250 },
    );
    const { rows: counts } = await sql<{ n: number; d: number }>`
      SELECT count(*)::int AS n, count(DISTINCT imei1)::int AS d FROM commands WHERE batch_id = ${batchId}`.execute(
      database.db,
    );
    expect(counts[0]).toEqual({ n: rows, d: rows });
  });
});
