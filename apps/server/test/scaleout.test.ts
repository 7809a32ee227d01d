/**
 * Scale-out: two server instances on one PostgreSQL and one external MQTT broker share a
 * 20,000-row batch; one is killed with SIGKILL halfway; the other finishes it. Every IMEI is processed
 * exactly once and every device command is acknowledged by its (simulated) device.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { topics } from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import mqtt from 'mqtt';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { imeiCsv } from './multipart';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const ROWS = 20_000;
const ready = Boolean(inject('postgresUrl') && inject('postgresTemplate') && inject('mqttUrl'));

async function createDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  const adminUrl = inject('postgresUrl') as string;
  const name = `lendlock_scale_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name} TEMPLATE ${inject('postgresTemplate')}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
    },
  };
}

function startInstance(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  let out = '';
  child.stdout?.on('data', (c) => (out += c));
  child.stderr?.on('data', (c) => (out += c));
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no start: ${out}`)), 60_000);
    const check = setInterval(() => {
      const match = /Console: (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearInterval(check);
        clearTimeout(timer);
        ok({ child, url: match[1] });
      }
    }, 50);
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

describe.runIf(ready)('two instances on PostgreSQL and an external broker', () => {
  it('share a batch, survive one being killed, and process every IMEI exactly once', {
    timeout: 300_000,
  }, async () => {
    const database = await createDatabase();
    cleanups.push(database.drop);
    const imeis = Array.from({ length: ROWS }, (_, i) => imeiFor(randomBytes(1)[0] ?? 7, 500_000_000 + i));
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    cleanups.push(() => db.end());
    await db.query(
      `INSERT INTO devices (imei1, match_status, online) SELECT unnest($1::text[]), 'YES', true`,
      [imeis],
    );

    // One simulated agent per IMEI would be 20,000 connections: a multiplexer answers for all of them.
    const brokerUrl = inject('mqttUrl') as string;
    const agent = await mqtt.connectAsync(brokerUrl, {
      clientId: `scale-agent-${randomBytes(4).toString('hex')}`,
      clean: true,
    });
    cleanups.push(() => agent.endAsync());
    const ours = new Set(imeis);
    const executed = new Map<string, number>();
    agent.on('message', (topic, payload) => {
      const imei = topic.split('/')[2] ?? '';
      if (!ours.has(imei)) return;
      const message = JSON.parse(payload.toString()) as { id: string };
      executed.set(message.id, (executed.get(message.id) ?? 0) + 1);
      agent.publish(topics.ack(imei), JSON.stringify({ id: message.id, status: 'EXECUTED' }), { qos: 1 });
    });
    await agent.subscribeAsync('lendlock/d/+/cmd', { qos: 1 });

    const env = {
      DATABASE_URL: database.url,
      MQTT_URL: brokerUrl,
      MQTT_ALLOW_ANONYMOUS: 'on',
      MQTT_SHARED_GROUP: `scale${randomBytes(4).toString('hex')}`,
      DEMO_DATA: 'off',
      BOOTSTRAP_SUPERADMIN_EMAIL: 'root@lendlock.com',
      BOOTSTRAP_SUPERADMIN_PASSWORD: 'scale-out-password',
      BATCH_WORKERS: '2',
      MFA_REQUIRED_LEVELS: 'none', // the bootstrap SUPERADMIN signs in with its password alone
      COMMAND_RESEND_AFTER: '3s',
      DISPATCH_INTERVAL: '500ms',
    };
    const first = await startInstance(env);
    const second = await startInstance(env);
    cleanups.push(async () => {
      second.child.kill('SIGTERM');
    });
    const login = async (url: string) =>
      (
        (await (
          await fetch(`${url}/api/login.php`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ email: 'root@lendlock.com', password: 'scale-out-password' }),
          })
        ).json()) as { token: string }
      ).token;
    const token = await login(first.url);
    const form = new FormData();
    form.append('file', new Blob([imeiCsv(imeis)], { type: 'text/csv' }), 'scale.csv');
    const { batchId } = (await (
      await fetch(`${first.url}/api/bulkLockCopy.php`, {
        method: 'POST',
        headers: { 'x-api-key': token },
        body: form,
      })
    ).json()) as { batchId: number };
    expect(batchId).toBeGreaterThan(0);

    // Both instances run batch workers on it; kill the first halfway.
    for (;;) {
      const { rows } = await db.query<{ processed: number }>('SELECT processed FROM batches WHERE id = $1', [
        batchId,
      ]);
      if ((rows[0]?.processed ?? 0) >= ROWS / 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const exited = new Promise((r) => first.child.once('exit', r));
    first.child.kill('SIGKILL');
    await exited;

    for (;;) {
      const { rows } = await db.query<{ status: string }>('SELECT status FROM batches WHERE id = $1', [
        batchId,
      ]);
      if (rows[0]?.status === 'complete') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    const counts = await db.query<{ n: number; d: number }>(
      'SELECT count(*)::int AS n, count(DISTINCT imei1)::int AS d FROM commands WHERE batch_id = $1',
      [batchId],
    );
    expect(counts.rows[0]).toEqual({ n: ROWS, d: ROWS });
    // Every command acknowledged by its device (the survivor resends what the dead one had in flight).
    for (;;) {
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM commands WHERE batch_id = $1 AND status <> 'EXECUTED'",
        [batchId],
      );
      if (rows[0]?.n === 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const { rows: done } = await db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM commands WHERE batch_id = $1 AND status = 'EXECUTED'",
      [batchId],
    );
    expect(done[0]?.n).toBe(ROWS);
    // The instance that processed a row is recorded nowhere else: each row has one result.
    const { rows: open } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM batch_chunks WHERE batch_id = $1',
      [batchId],
    );
    expect(open[0]?.n).toBe(0);
    const { rows: results } = await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM batch_items WHERE batch_id = $1',
      [batchId],
    );
    expect(results[0]?.n).toBe(ROWS);
  });
});
