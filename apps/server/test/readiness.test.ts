/**
 * Readiness tells the truth: `/readyz` is 503 naming what is down while the database or the
 * external MQTT broker is unreachable, and ready again once it is back; `/healthz` stays liveness.
 */
import { spawnSync } from 'node:child_process';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { buildApp } from '../src/app';
import { UNAVAILABLE_MESSAGE } from '../src/plugins/errors';
import { openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildTestApp } from './factories';
import { startAnonymousMosquitto } from './private-mosquitto';

const hasMosquitto = spawnSync('mosquitto', ['-h']).error === undefined;

describe.runIf(hasMosquitto)('readiness with an external broker', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(() => database?.close());

  it('is 503 naming the broker while it is down, ready again when it is back', async () => {
    let broker = await startAnonymousMosquitto();
    const port = broker.port;
    const app = await buildTestApp(database, {
      mqttUrl: broker.url,
      mqttSharedGroup: 'readiness',
      mqttAllowAnonymous: true,
    });
    try {
      await vi.waitFor(async () => expect((await app.inject('/readyz')).statusCode).toBe(200));
      expect((await app.inject('/readyz')).json()).toEqual({
        status: 'ok',
        database: 'pglite',
        broker: { kind: 'external', connected: true, deviceAuth: 'anonymous' },
      });

      await broker.stop();
      await vi.waitFor(async () => expect((await app.inject('/readyz')).statusCode).toBe(503), {
        timeout: 10_000,
      });
      expect((await app.inject('/readyz')).json()).toEqual({
        status: 'error',
        code: 'UNAVAILABLE',
        message: 'MQTT broker unreachable',
        unreachable: ['broker'],
        database: 'pglite',
        broker: { kind: 'external', connected: false, deviceAuth: 'anonymous' },
      });
      // Liveness: the process itself is fine.
      expect((await app.inject('/healthz')).statusCode).toBe(200);
      const metrics = (await app.inject('/metrics')).body;
      expect(metrics).toMatch(/^lendlock_broker_connected 0$/m);

      broker = await startAnonymousMosquitto(port);
      await vi.waitFor(async () => expect((await app.inject('/readyz')).statusCode).toBe(200), {
        timeout: 15_000,
      });
    } finally {
      await app.close();
      await broker.stop();
    }
  });
});

describe('readiness without the database', () => {
  it('is 503 naming the database when PGlite is gone', async () => {
    const database = await openTestDatabase('pglite');
    const app = await buildApp({ config: buildConfig(), database, deviceChannel: false, logger: false });
    await app.ready();
    try {
      expect((await app.inject('/readyz')).json()).toEqual({ status: 'ok', database: 'pglite' });
      await database.close();
      const ready = await app.inject('/readyz');
      expect(ready.statusCode).toBe(503);
      expect(ready.json()).toEqual({
        status: 'error',
        code: 'UNAVAILABLE',
        message: 'Database unreachable',
        unreachable: ['database'],
        database: 'pglite',
      });
      expect((await app.inject('/healthz')).statusCode).toBe(200);
      expect((await app.inject('/metrics')).body).toMatch(/^lendlock_database_up 0$/m);
    } finally {
      await app.close().catch(() => {});
    }
  });

  it.runIf(inject('postgresUrl'))(
    'is 503 while PostgreSQL refuses the connections, ready again when it takes them',
    async () => {
      const database = await openTestDatabase('postgres');
      const name = new URL(database.location.databaseUrl as string).pathname.slice(1);
      const admin = new pg.Client({ connectionString: inject('postgresUrl') as string });
      await admin.connect();
      const app = await buildApp({ config: buildConfig(), database, deviceChannel: false, logger: false });
      await app.ready();
      try {
        expect((await app.inject('/readyz')).statusCode).toBe(200);
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
        await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1', [
          name,
        ]);
        await vi.waitFor(async () => expect((await app.inject('/readyz')).statusCode).toBe(503), {
          timeout: 10_000,
        });
        const ready = (await app.inject('/readyz')).json();
        expect(ready).toMatchObject({
          status: 'error',
          message: 'Database unreachable',
          unreachable: ['database'],
          database: 'postgres',
        });
        expect((await app.inject('/healthz')).statusCode).toBe(200);
        // A call meets the refusal (SQLSTATE 55000, "not currently accepting connections"): 503, not 500.
        const call = await app.inject({
          method: 'POST',
          url: '/api/login.php',
          payload: { email: 'someone@lendlock.com', password: 'Secret#123-lendlock' },
        });
        expect(call.statusCode).toBe(503);
        expect(call.json()).toEqual({ status: 'error', code: 'UNAVAILABLE', message: UNAVAILABLE_MESSAGE });
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
        await vi.waitFor(async () => expect((await app.inject('/readyz')).statusCode).toBe(200), {
          timeout: 10_000,
        });
      } finally {
        await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`).catch(() => {});
        await admin.end();
        await app.close();
        await database.close();
      }
    },
  );
});
