/**
 * A batch survives a crash: the server is killed with SIGKILL in the middle of a batch, started again on
 * the same data, and the batch resumed; every IMEI ends up processed exactly once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { imeiFor } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../src/db/database';
import { imeiCsv } from './multipart';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const ROWS = 6000;
const KILLS = 5;

interface Proc {
  child: ChildProcess;
  url: string;
}

async function start(dataDir: string): Promise<Proc> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATA_DIR: dataDir,
      PORT: '0',
      HOST: '127.0.0.1',
      MQTT_PORT: '0',
      DEMO_DATA: 'off',
      LOG_LEVEL: 'warn',
      BOOTSTRAP_SUPERADMIN_EMAIL: 'root@lendlock.com',
      BOOTSTRAP_SUPERADMIN_PASSWORD: 'crash-test-password',
      BATCH_WORKERS: '1',
      MFA_REQUIRED_LEVELS: 'none', // the bootstrap SUPERADMIN signs in with its password alone
    },
  });
  let out = '';
  child.stdout?.on('data', (c) => (out += c));
  child.stderr?.on('data', (c) => (out += c));
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no start: ${out}`)), 60_000);
    const check = setInterval(() => {
      const match = /Console: (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearInterval(check);
        clearTimeout(timer);
        ok(match[1]);
      }
    }, 50);
    child.once('exit', () => {
      clearInterval(check);
      clearTimeout(timer);
      fail(new Error(`exited: ${out}`));
    });
  });
  return { child, url };
}

async function json(url: string, token: string, body: object) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': token },
    body: JSON.stringify(body),
  });
  return response.json() as Promise<Record<string, never>>;
}

async function login(url: string): Promise<string> {
  const response = await fetch(`${url}/api/login.php`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'root@lendlock.com', password: 'crash-test-password' }),
  });
  return ((await response.json()) as { token: string }).token;
}

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('a batch across crashes', () => {
  it(`is processed exactly once after ${KILLS} SIGKILLs mid-batch`, { timeout: 240_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-crash-'));
    dirs.push(dataDir);
    cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
    const imeis = Array.from({ length: ROWS }, (_, i) => imeiFor(42, i));
    {
      const database = await openDatabase({ dataDir });
      for (let i = 0; i < imeis.length; i += 1000) {
        await database.db
          .insertInto('devices')
          .values(
            imeis.slice(i, i + 1000).map((imei1) => ({ imei1, match_status: 'YES' as const, imei2: null })),
          )
          .execute();
      }
      await database.close();
    }

    let proc = await start(dataDir);
    let token = await login(proc.url);
    const form = new FormData();
    form.append('user', 'root@lendlock.com');
    form.append('file', new Blob([imeiCsv(imeis)], { type: 'text/csv' }), 'crash.csv');
    const uploaded = (await (
      await fetch(`${proc.url}/api/bulkLockCopy.php`, {
        method: 'POST',
        headers: { 'x-api-key': token },
        body: form,
      })
    ).json()) as {
      batchId: number;
    };
    const batchId = uploaded.batchId;
    expect(batchId).toBeGreaterThan(0);

    let lastProcessed = 0;
    for (let kill = 0; kill < KILLS; kill++) {
      // Wait until the batch has moved on, then kill the server without warning.
      const step = 200 + Math.floor(Math.random() * 700);
      for (;;) {
        const batch = (await json(`${proc.url}/api/v2/batch/progress`, token, { batchId }))
          .batch as unknown as { processed: number };
        // A random point of the batch each time.
        if (batch.processed >= lastProcessed + step) {
          lastProcessed = batch.processed;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      const exited = new Promise((r) => proc.child.once('exit', r));
      proc.child.kill('SIGKILL');
      await exited;
      proc = await start(dataDir);
      token = await login(proc.url);
      // The operator resumes it from the card (Process).
      await json(`${proc.url}/api/v2/batch/resume`, token, { batchId });
    }
    for (;;) {
      const batch = (await json(`${proc.url}/api/v2/batch/progress`, token, { batchId }))
        .batch as unknown as { isComplete: string; processed: number };
      if (batch.isComplete === 'complete') {
        expect(batch.processed).toBe(ROWS);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const exited = new Promise((r) => proc.child.once('exit', r));
    proc.child.kill('SIGTERM');
    await exited;

    const database = await openDatabase({ dataDir });
    try {
      const counts = await sql<{ n: number; distinct_imeis: number }>`
        SELECT count(*)::int AS n, count(DISTINCT imei1)::int AS distinct_imeis FROM commands WHERE batch_id = ${batchId}`.execute(
        database.db,
      );
      expect(counts.rows[0]).toEqual({ n: ROWS, distinct_imeis: ROWS });
      const open = await sql<{
        n: number;
      }>`SELECT count(*)::int AS n FROM batch_chunks WHERE batch_id = ${batchId}`.execute(database.db);
      expect(open.rows[0]?.n).toBe(0);
      // Each row has exactly one result (the key is the batch and the S.No.).
      const results = await sql<{ n: number; found: number }>`
        SELECT count(*)::int AS n, count(*) FILTER (WHERE result = 'found')::int AS found
        FROM batch_items WHERE batch_id = ${batchId}`.execute(database.db);
      expect(results.rows[0]).toEqual({ n: ROWS, found: ROWS });
    } finally {
      await database.close();
    }
  });
});
