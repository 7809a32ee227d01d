import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { dayInTimeZone, validateNotifyCsv } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { PUBLIC, ROUTE_POLICIES } from '../src/authz/policies';
import { INTERNAL_MESSAGE } from '../src/core/errors';
import { MissingRoutePolicyError, registerAuth } from '../src/plugins/auth';
import { registerErrorHandling } from '../src/plugins/errors';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildTestApp } from './factories';

describe.each(databaseKinds())('the server on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let webDist: string;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    webDist = mkdtempSync(join(tmpdir(), 'lendlock-web-'));
    writeFileSync(
      join(webDist, 'index.html'),
      '<!doctype html><meta name="csp-nonce" content="__CSP_NONCE__"><div id="root"></div>',
    );
    writeFileSync(join(webDist, 'samplecsv.csv'), 'Sno,IMEI1\n');
    app = await buildTestApp(database, { webDist });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it('answers /healthz and /readyz with the database kind', async () => {
    expect((await app.inject('/healthz')).json()).toEqual({ status: 'ok' });
    const ready = await app.inject('/readyz');
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      status: 'ok',
      database: kind,
      broker: { kind: 'embedded', connected: true, deviceAuth: 'embedded' },
    });
  });

  it('serves the runtime configuration of the console', async () => {
    const response = await app.inject('/config.json');
    const config = response.json();
    expect(config).toMatchObject({ apiBase: '/api/', keyApiBase: '/keyapi/', productLabel: 'Lendlock' });
    expect(Buffer.from(config.envelopeKey, 'base64')).toHaveLength(32);
  });

  it('keeps one generated envelope key for every instance on the same database', async () => {
    const second = await buildTestApp(database, { webDist });
    const a = (await app.inject('/config.json')).json().envelopeKey;
    const b = (await second.inject('/config.json')).json().envelopeKey;
    await second.close();
    expect(b).toBe(a);
  });

  it('serves index.html for console routes with a strict CSP whose nonce is in the page', async () => {
    for (const path of ['/', '/login', '/superadmin/lockDevice', '/resetPassword/abc']) {
      const response = await app.inject(path);
      expect(response.statusCode, path).toBe(200);
      expect(response.headers['content-type']).toContain('text/html');
      const csp = String(response.headers['content-security-policy']);
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(csp).toContain("frame-ancestors 'none'");
      const nonce = /style-src 'self' 'nonce-([0-9a-f]+)'/.exec(csp)?.[1];
      expect(nonce).toBeTruthy();
      expect(response.body).toContain(`content="${nonce}"`);
      expect(response.headers['x-content-type-options']).toBe('nosniff');
      expect(response.headers['referrer-policy']).toBe('no-referrer');
    }
  });

  it('puts the security headers on refusals too', async () => {
    const response = await app.inject({ method: 'POST', url: '/api/logout.php' });
    expect(response.statusCode).toBe(401);
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['content-security-policy']).toContain("default-src 'self'");
  });

  it('serves static files of the console and 404s unknown calls as JSON', async () => {
    expect((await app.inject('/samplecsv.csv')).body).toBe('Sno,IMEI1\n');
    const missing = await app.inject({ method: 'POST', url: '/api/nothing.php', payload: {} });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ status: 'error', code: 'NOT_FOUND' });
    expect((await app.inject('/api/nothing.php')).statusCode).toBe(404);
  });

  it("serves the Notify sample dated on the day it is asked for, passing the product's validation", async () => {
    const sample = await app.inject('/notificationsamplecsv.csv');
    expect(sample.statusCode).toBe(200);
    expect(sample.headers['content-type']).toBe('text/csv; charset=utf-8');
    // The test configuration's REPORT_TIMEZONE is UTC.
    const today = dayInTimeZone('UTC') as string;
    const checked = await validateNotifyCsv(sample.body, { today });
    expect(checked.invalid).toEqual([]);
    expect(checked.valid.map((row) => row.template)).toEqual(['Pre', 'Due', 'Post']);
  });

  it('serves the integrator documentation at /docs', async () => {
    const page = await app.inject('/docs/');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('swagger-initializer.js');
    expect(page.body).not.toMatch(/<script>[^<]/);
    expect((await app.inject('/docs/static/swagger-initializer.js')).statusCode).toBe(200);
    const document = (await app.inject('/docs/json')).json();
    expect(document.info.title).toBe('Lendlock API');
  });

  it('says the console is not built rather than serving nothing', async () => {
    const bare = await buildTestApp(database, { webDist: join(webDist, 'missing') });
    const response = await bare.inject('/login');
    await bare.close();
    expect(response.statusCode).toBe(503);
    expect(response.body).toContain('npm run build');
  });

  it('refuses a non-JSON body and an oversized body with clear errors', async () => {
    const bad = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toEqual({
      status: 'error',
      code: 'VALIDATION_FAILED',
      message: 'The request body is not valid JSON.',
    });
    const big = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ email: 'x'.repeat(2_000_000), password: 'y' }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('the route permission table', () => {
  it('refuses to build an app with a route missing from the table', async () => {
    const app = Fastify({ logger: false });
    registerAuth(app, undefined as never, { 'GET /known': PUBLIC });
    app.get('/known', async () => 'ok');
    expect(() => app.get('/unlisted', async () => 'x')).toThrow(MissingRoutePolicyError);
    expect(() => app.post('/known', async () => 'x')).toThrow(/POST \/known/);
    await app.close();
  });

  it('has no stale entry: every policy in the table belongs to a route the app serves', async () => {
    const database = await openTestDatabase('pglite');
    const dir = mkdtempSync(join(tmpdir(), 'lendlock-web-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html>');
    // Built and not-built console register slightly different routes; together they cover the table.
    const apps = [
      await buildApp({ config: buildConfig({ webDist: join(dir, 'missing') }), database, logger: false }),
      await buildApp({ config: buildConfig({ webDist: dir }), database, logger: false }),
    ];
    const served = Object.keys(ROUTE_POLICIES).filter((key) => {
      const [method, url] = key.split(' ') as [string, string];
      return apps.some((app) => app.hasRoute({ method: method as 'GET', url }));
    });
    for (const app of apps) await app.close();
    await database.close();
    expect(served.sort()).toEqual(Object.keys(ROUTE_POLICIES).sort());
  });

  it('hides the details of a server error from the client', async () => {
    const app = Fastify({ logger: false });
    registerAuth(app, undefined as never, { 'GET /boom': PUBLIC });
    registerErrorHandling(app);
    app.get('/boom', async () => {
      throw new Error('secret stack detail at /work/main/apps/server');
    });
    const response = await app.inject('/boom');
    await app.close();
    expect(response.statusCode).toBe(500);
    expect(response.json()).toEqual({ status: 'error', code: 'INTERNAL', message: INTERNAL_MESSAGE });
    expect(response.body).not.toContain('secret');
    expect(response.body).not.toContain('/work/main');
  });

  it('answers 503 with a clear message when the database is unreachable', async () => {
    const app = Fastify({ logger: false });
    registerAuth(app, undefined as never, { 'GET /db': PUBLIC });
    registerErrorHandling(app);
    app.get('/db', async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    });
    const response = await app.inject('/db');
    await app.close();
    expect(response.statusCode).toBe(503);
    expect(response.json().code).toBe('UNAVAILABLE');
  });
});
