/**
 * /metrics from a running app: the figures move with what happens, Prometheus' own linter accepts the
 * exposition (`promtool check metrics`, when promtool is installed: CI installs Debian's `prometheus`),
 * every metric the Grafana dashboard queries exists, and the bearer token is checked.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bearerMatches } from '../src/plugins/metrics';
import { openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, simulatedDevice, startDeviceServer } from './devices';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const TOKEN = 'metrics-token-0123456789';
const hasPromtool = spawnSync('promtool', ['--version']).error === undefined;
const NO_PROMTOOL = 'promtool is not installed (Debian: apt-get install prometheus; .ci/run installs it)';

/** Every metric name a Prometheus exposition offers (histograms with their _bucket, _sum, _count). */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type?.[1] && type[2]) {
      names.add(type[1]);
      if (type[2] === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(type[1] + s);
    } else if (line && !line.startsWith('#')) names.add(line.split(/[{ ]/)[0] as string);
  }
  return names;
}

describe('Prometheus metrics', () => {
  let database: TestDatabase;
  let server: DeviceServer;
  let text = '';

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    server = await startDeviceServer(database, 'embedded', { metricsToken: TOKEN });
    const device = simulatedDevice(server);
    await device.register();
    await device.connect();
    const issued = await server.app.ctx.commands.issue({
      imei: device.imei,
      command: 'LOCK',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(
      async () => {
        const row = await database.db
          .selectFrom('commands')
          .select('status')
          .where('transaction_id', '=', issued.transactionId)
          .executeTakeFirstOrThrow();
        expect(row.status).toBe('EXECUTED');
      },
      { timeout: 15_000, interval: 100 },
    );
    await server.app.inject('/healthz');
    const response = await server.app.inject({
      url: '/metrics',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(response.statusCode).toBe(200);
    text = response.body;
    await device.disconnect();
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('exposes command, batch, device, mail and HTTP figures', () => {
    expect(text).toMatch(/^lendlock_device_acks_total\{status="EXECUTED"\} [1-9]/m);
    expect(text).toContain('lendlock_device_acks_total{status="FAILED"} 0');
    expect(text).toMatch(/^lendlock_devices_online 1$/m);
    expect(text).toContain('lendlock_commands_pending{status="QUEUED"} 0');
    expect(text).toMatch(/^lendlock_batches_incomplete 0$/m);
    expect(text).toMatch(/^lendlock_batch_rows_remaining 0$/m);
    expect(text).toMatch(/^lendlock_mail_outbox_pending 0$/m);
    expect(text).toContain('lendlock_mail_failed_total{kind="password_reset"} 0');
    // Failed automated collections actions, each action present from 0 (an alert sees the first one).
    for (const action of ['LOCK', 'UNLOCK', 'RELEASE'])
      expect(text).toContain(`lendlock_collections_failed_total{action="${action}"} 0`);
    expect(text).toMatch(/^lendlock_database_up 1$/m);
    expect(text).toMatch(/^lendlock_broker_connected 1$/m);
    expect(text).toContain('lendlock_instance_info{database="pglite",broker="embedded"} 1');
    expect(text).toMatch(
      /^lendlock_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} 1$/m,
    );
  });

  it('measures issue to acknowledgement as a histogram, and no latency as a gauge', () => {
    expect(text).toContain('# TYPE lendlock_command_ack_latency_seconds histogram');
    expect(text).toMatch(/^lendlock_command_ack_latency_seconds_count [1-9]/m);
    expect(text).toMatch(/^lendlock_command_ack_latency_seconds_bucket\{le="\+Inf"\} [1-9]/m);
    expect(text).not.toContain('quantile=');
  });

  it('keeps Node.js process metrics under their standard names, none misnamed', () => {
    expect(text).toMatch(/^process_cpu_seconds_total /m);
    expect(text).toMatch(/^process_resident_memory_bytes /m);
    expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    expect(text).not.toContain('lendlock_process_');
    // A gauge must not end in _total: prom-client's nodejs_active_*_total are left out.
    for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm))
      if (name?.endsWith('_total')) expect(type, name).toBe('counter');
  });

  it('passes `promtool check metrics` with no lint output', (context) => {
    if (!hasPromtool) return context.skip(NO_PROMTOOL);
    const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
    expect(result.stdout + result.stderr).toBe('');
    expect(result.status).toBe(0);
  });

  it('has every metric the Grafana dashboard queries', () => {
    const dashboard = JSON.parse(readFileSync(resolve(repoRoot, 'deploy/grafana/lendlock.json'), 'utf8'));
    const exprs: string[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if ((key === 'expr' || key === 'query') && typeof value === 'string') exprs.push(value);
          else walk(value);
        }
      }
    };
    walk(dashboard);
    expect(exprs.length).toBeGreaterThan(5);
    const queried = new Set(exprs.flatMap((e) => e.match(/\b(?:lendlock|process|nodejs)_[a-z0-9_]+/g) ?? []));
    const exposed = exposedNames(text);
    expect([...queried].filter((name) => !exposed.has(name))).toEqual([]);
  });

  it('needs the bearer token: none or a wrong one is 401 and tells nothing', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789',
      `Basic ${TOKEN}`,
      TOKEN,
      'Bearer ',
    ]) {
      const response = await server.app.inject({
        url: '/metrics',
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.statusCode, String(authorization)).toBe(401);
      expect(response.json()).toEqual({
        status: 'error',
        code: 'UNAUTHENTICATED',
        message: 'Metrics need the bearer token of METRICS_TOKEN.',
      });
      expect(response.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      expect(response.body).not.toContain('lendlock_');
      expect(response.body).not.toContain(TOKEN.slice(0, 8));
    }
    const right = await server.app.inject({ url: '/metrics', headers: { authorization: `bearer ${TOKEN}` } });
    expect(right.statusCode).toBe(200);
  });

  it('compares the token whole, whatever its length', () => {
    expect(bearerMatches(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(bearerMatches(`Bearer ${TOKEN}x`, TOKEN)).toBe(false);
    expect(bearerMatches(`Bearer ${TOKEN.slice(0, -1)}`, TOKEN)).toBe(false);
    expect(bearerMatches('Bearer', TOKEN)).toBe(false);
    expect(bearerMatches(undefined, TOKEN)).toBe(false);
  });
});
