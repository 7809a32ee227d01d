/**
 * Metrics and API docs are not public by accident: listening beyond loopback needs a
 * METRICS_TOKEN (or METRICS_PUBLIC=on), and API_DOCS=off takes Swagger UI away.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, isLoopbackHost, loadConfig } from '../src/config';
import { openTestDatabase, type TestDatabase } from './db';
import { buildTestApp } from './factories';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const TOKEN = 'a-metrics-token-of-some-length';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

const REFUSAL =
  'METRICS_TOKEN must be set when HOST (0.0.0.0) is not a loopback address, or anyone who reaches the server could read /metrics: set METRICS_TOKEN (at least 16 characters), or METRICS_PUBLIC=on if something in front keeps /metrics private';

describe('metrics beyond loopback', () => {
  it('tells loopback addresses from the others', () => {
    for (const host of ['localhost', '127.0.0.1', '127.8.9.10', '::1', '[::1]', '::ffff:127.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', 'lendlock.internal', '128.0.0.1'])
      expect(isLoopbackHost(host), host).toBe(false);
  });

  it('refuses a configuration that would publish /metrics, and accepts a token or METRICS_PUBLIC=on', () => {
    expect(problems({ HOST: '0.0.0.0' })).toEqual([REFUSAL]);
    expect(problems({ HOST: '10.1.2.3' })[0]).toContain('HOST (10.1.2.3) is not a loopback address');
    expect(problems({ HOST: '0.0.0.0', METRICS_TOKEN: TOKEN })).toEqual([]);
    expect(problems({ HOST: '0.0.0.0', METRICS_PUBLIC: 'on' })).toEqual([]);
    expect(problems({ HOST: '0.0.0.0', METRICS_PUBLIC: 'yes' })).toContain(
      'METRICS_PUBLIC must be on or off (got "yes")',
    );
    // The default listens on this machine only, where an open /metrics is fine.
    expect(loadConfig({}).host).toBe('localhost');
    expect(problems({ HOST: '127.0.0.1' })).toEqual([]);
  });

  // Loading the server's sources through tsx takes a while on a busy machine.
  it('the server process refuses to start with one clear line, no stack trace', { timeout: 120_000 }, () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-exposure-'));
    try {
      const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
        cwd: serverDir,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, HOST: '0.0.0.0', DATA_DIR: dataDir },
        encoding: 'utf8',
        timeout: 110_000,
      });
      expect(result.status).toBe(2);
      expect(result.stderr).toBe(`Invalid configuration:\n  - ${REFUSAL}\n`);
      expect(result.stdout).toBe('');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('API_DOCS', () => {
  let database: TestDatabase;
  let withDocs: FastifyInstance;
  let withoutDocs: FastifyInstance;
  let webDist: string;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    // A built console, whose index.html answers unknown GETs: /docs must not fall through to it.
    webDist = mkdtempSync(join(tmpdir(), 'lendlock-web-'));
    writeFileSync(join(webDist, 'index.html'), '<!doctype html><div id="root"></div>');
    withDocs = await buildTestApp(database, { webDist });
    withoutDocs = await buildTestApp(database, { webDist, apiDocs: false });
  });
  afterAll(async () => {
    await withDocs?.close();
    await withoutDocs?.close();
    await database?.close();
    rmSync(webDist, { recursive: true, force: true });
  });

  it('serves Swagger UI and the document by default', async () => {
    expect((await withDocs.inject('/docs/json')).json()).toMatchObject({ info: { title: 'Lendlock API' } });
    const ui = await withDocs.inject('/docs/');
    expect(ui.statusCode).toBe(200);
    expect(ui.body).toContain('swagger');
  });

  it('answers 404 for /docs and all it serves when API_DOCS=off', async () => {
    expect(loadConfig({ API_DOCS: 'off' }).apiDocs).toBe(false);
    for (const url of ['/docs', '/docs/', '/docs/json', '/docs/yaml', '/docs/static/index.html']) {
      const response = await withoutDocs.inject(url);
      expect(response.statusCode, url).toBe(404);
      expect(response.json()).toEqual({
        status: 'error',
        code: 'NOT_FOUND',
        message: `No such call: GET ${url}`,
      });
    }
    // The console itself is still served.
    expect((await withoutDocs.inject('/login')).statusCode).toBe(200);
  });
});
