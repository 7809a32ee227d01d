import { MESSAGES, type Session, WEBHOOK_MESSAGES } from '@lendlock/contract';
import { waitUntil } from '@lendlock/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { seal, unseal } from '../src/lib/sealed';
import { OfflineAnnouncer } from '../src/modules/devices/offline';
import { checkWebhookUrl, guardedLookup, isPublicAddress } from '../src/modules/webhooks/address';
import {
  DEFAULT_WEBHOOK_TIMING,
  retryDelayMs,
  WebhookDelivery,
  type WebhookTiming,
} from '../src/modules/webhooks/delivery';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';
import { Receiver } from './webhook-receiver';

/** How long the outage test keeps its receiver down (WEBHOOK_OUTAGE_SECONDS, default 60). */
const WEBHOOK_OUTAGE_MS = Number(process.env.WEBHOOK_OUTAGE_SECONDS ?? 60) * 1000;

/** Fast retries, so a test sees several attempts in seconds. */
const FAST: WebhookTiming = {
  ...DEFAULT_WEBHOOK_TIMING,
  retryFirstMs: 100,
  retryMaxMs: 400,
  pollMs: 100,
  breakerCooldownMs: 500,
};

describe('webhook addresses', () => {
  it('only ordinary public addresses are public', () => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fc00::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '224.0.0.1',
      // IPv4-compatible (::a.b.c.d), IPv4-mapped written in hex, IPv4-translated and NAT64 forms.
      '::127.0.0.1',
      '::7f00:1',
      '::a9fe:a9fe',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '::ffff:0:7f00:1',
      '64:ff9b::7f00:1',
      '::',
    ])
      expect(isPublicAddress(address), address).toBe(false);
    for (const address of ['8.8.8.8', '203.0.114.1', '2a00:1450:4001:80b::200e'])
      expect(isPublicAddress(address), address).toBe(true);
  });

  it('refuses webhook URLs naming loopback or metadata addresses in IPv6 forms', async () => {
    for (const url of [
      'https://[::127.0.0.1]/',
      'https://[::a9fe:a9fe]/latest/meta-data/',
      'https://[::ffff:127.0.0.1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://[0:0:0:0:0:ffff:7f00:1]/',
      'https://[::ffff:0:a9fe:a9fe]/',
    ])
      expect(await checkWebhookUrl(url, false), url).toBe('privateAddress');
    expect(await checkWebhookUrl('https://[2a00:1450:4001:80b::200e]/', false)).toBe('ok');
  });

  it('the socket lookup refuses a name that resolves to loopback unless allowed', async () => {
    const looked = (allow: boolean) =>
      new Promise<{ error: string | null; address: unknown }>((resolve) =>
        guardedLookup(allow)('localhost', {}, (error, address) =>
          resolve({ error: error ? ((error as Error & { code?: string }).code ?? 'error') : null, address }),
        ),
      );
    expect((await looked(false)).error).toBe('EWEBHOOKBLOCKED');
    const allowed = await looked(true);
    expect(allowed.error).toBeNull();
    expect(String(allowed.address)).toMatch(/^(127\.0\.0\.1|::1)$/);
  });

  it('retries back off exponentially, with jitter, up to the maximum', () => {
    const timing = { ...DEFAULT_WEBHOOK_TIMING, retryFirstMs: 1000, retryMaxMs: 8000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => retryDelayMs(n, timing, () => 0.5))).toEqual([
      1000, 2000, 4000, 8000, 8000, 8000,
    ]);
    expect(retryDelayMs(1, timing, () => 0)).toBe(750);
    expect(retryDelayMs(1, timing, () => 1)).toBe(1250);
  });
});

describe.each(databaseKinds())('webhooks on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let adminSession: Session;
  const receivers: Receiver[] = [];
  const workers: WebhookDelivery[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, { webhookAllowPrivate: true });
    // The app's own worker is stopped: each test drives its own (timing, instances).
    await app.ctx.webhookDelivery.stop();
    await app.ctx.offlineAnnouncer.stop();
    adminSession = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    for (const receiver of receivers.splice(0)) await receiver.stop();
    // Each test starts with no endpoint: the previous ones are deleted (their deliveries given up).
    for (const { id } of await database.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('deleted_at', 'is', null)
      .execute())
      await call(adminSession.token, '/api/v2/webhooks/delete', { id: Number(id) });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const call = (token: string, url: string, payload?: object) =>
    app.inject({
      method: payload ? 'POST' : 'GET',
      url,
      headers: { 'x-api-key': token },
      ...(payload ? { payload } : {}),
    });

  const receiver = async () => {
    const r = new Receiver();
    await r.start();
    receivers.push(r);
    return r;
  };

  const register = async (r: Receiver, events: string[], token = adminSession.token) => {
    const response = await call(token, '/api/v2/webhooks', {
      url: r.url,
      events,
      description: 'loan system',
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json();
    r.secret = body.secret;
    return body.endpoint.id as number;
  };

  const worker = (timing = FAST) => {
    const w = new WebhookDelivery({
      db: database.db,
      log: app.log,
      openSecret: app.ctx.webhooks.openSecret,
      allowPrivate: true,
      timing,
    });
    workers.push(w);
    return w;
  };

  const device = async (imei1: string, retailerPhone: string | null) => {
    await database.db
      .insertInto('devices')
      .values({ imei1, imei2: null, retailer_phone: retailerPhone, match_status: 'YES' })
      .onConflict((oc) => oc.column('imei1').doNothing())
      .execute();
  };

  it('an ADMIN registers an endpoint: the secret is shown once, kept sealed, and the change audited', async () => {
    const r = await receiver();
    const id = await register(r, ['command.executed']);
    expect(r.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const row = await database.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row.secret_sealed).not.toContain(r.secret.slice(6));
    expect(row.secret_sealed).toMatch(/^v1:/);
    const list = await call(adminSession.token, '/api/v2/webhooks');
    expect(list.body).not.toContain(r.secret.slice(6));
    expect(list.json().items).toContainEqual(
      expect.objectContaining({ id, url: r.url, events: ['command.executed'], enabled: true }),
    );
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['action', 'result'])
      .where('action', '=', 'webhook.create')
      .where('target', '=', String(id))
      .execute();
    expect(audit).toEqual([{ action: 'webhook.create', result: 'success' }]);
  });

  it('a USER cannot register, list or replay, and nothing is written', async () => {
    const user = await loginAs(app, await buildUser(database, { permissions: ['deviceDetails', 'reports'] }));
    const before = await fingerprint(database.db, ['webhook_endpoints', 'webhook_deliveries']);
    const created = await call(user.token, '/api/v2/webhooks', {
      url: 'http://127.0.0.1:9/x',
      events: ['command.executed'],
    });
    expect(created.statusCode).toBe(403);
    expect(created.json().message).toBe(MESSAGES.unauthorised);
    expect((await call(user.token, '/api/v2/webhooks')).statusCode).toBe(403);
    expect((await call(user.token, '/api/v2/webhooks/replay', { deliveryId: 1 })).statusCode).toBe(403);
    expect(await fingerprint(database.db, ['webhook_endpoints', 'webhook_deliveries'])).toEqual(before);
  });

  it('delivers a signed event that a receiver verifies, once', async () => {
    const r = await receiver();
    await register(r, ['command.executed', 'device.released']);
    await device('356000000000101', null);
    const written = await app.ctx.webhookDelivery.emit(database.db, [
      { type: 'command.executed', imei1: '356000000000101', data: { transactionId: 't-1', command: 'LOCK' } },
      // Not subscribed: no delivery.
      { type: 'command.failed', imei1: '356000000000101', data: { transactionId: 't-2' } },
    ]);
    expect(written).toBe(1);
    await worker().runOnce();
    expect(r.rejected).toEqual([]);
    expect(r.received).toHaveLength(1);
    const [got] = r.received;
    expect(got?.type).toBe('command.executed');
    expect(got?.body).toMatchObject({
      type: 'command.executed',
      data: { transactionId: 't-1', command: 'LOCK' },
    });
    expect(got?.id).toMatch(/^msg_[0-9a-f]{32}$/);
    expect(got?.headers['webhook-signature']).toMatch(/^v1,/);
    const row = await database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'attempts', 'last_status_code'])
      .where('message_id', '=', got?.id ?? '')
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'DELIVERED', attempts: 1, last_status_code: 204 });
  });

  it(
    'a receiver that is down (60 s on PGlite) loses nothing: every event arrives, retried under its own id, past its open circuit',
    async () => {
      const r = await receiver();
      await register(r, ['command.executed']);
      const port = r.port;
      await r.stop();
      const downSince = Date.now();
      await device('356000000000102', null);
      await app.ctx.webhookDelivery.emit(
        database.db,
        Array.from({ length: 20 }, (_, i) => ({
          type: 'command.executed' as const,
          imei1: '356000000000102',
          data: { transactionId: `down-${i}` },
        })),
      );
      // Retries at most 2 s apart, so the receiver's return is seen within seconds.
      const w = worker({ ...FAST, retryMaxMs: 2_000 });
      w.start();
      // Down: connections refused; deliveries are tried and scheduled again, until the endpoint's circuit
      // opens (then they wait, untried, and one trial at a time probes the receiver).
      await waitUntil('a delivery tried twice', async () => {
        const rows = await database.db
          .selectFrom('webhook_deliveries')
          .select('attempts')
          .where('endpoint_id', '=', (await latestEndpoint()).id)
          .execute();
        return rows.length === 20 && rows.some((row) => row.attempts >= 2);
      });
      const failedAttempts = await database.db
        .selectFrom('webhook_deliveries')
        .select(['status', 'last_error', 'message_id', 'attempts'])
        .where('endpoint_id', '=', (await latestEndpoint()).id)
        .execute();
      expect(failedAttempts.every((row) => row.status === 'PENDING')).toBe(true);
      expect(
        failedAttempts
          .filter((row) => row.attempts > 0)
          .every((row) => /ECONNREFUSED/.test(row.last_error ?? '')),
      ).toBe(true);
      expect(
        await database.db
          .selectFrom('webhook_endpoints')
          .select('circuit_state')
          .where('id', '=', (await latestEndpoint()).id)
          .executeTakeFirstOrThrow(),
      ).not.toEqual({ circuit_state: 'closed' });
      // The whole outage (on one database kind: the other proves the same in seconds).
      const outageMs = kind === 'pglite' ? WEBHOOK_OUTAGE_MS : 0;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, downSince + outageMs - Date.now())));
      expect(r.received).toEqual([]);
      // Back up on the same address.
      await r.start(port);
      await waitUntil('all 20 delivered', () => r.received.length >= 20);
      await w.runOnce();
      const ids = r.received.map((x) => x.id);
      expect(new Set(ids).size).toBe(20);
      expect(ids.sort()).toEqual(failedAttempts.map((row) => row.message_id).sort());
      expect(r.received.map((x) => (x.body.data as { transactionId: string }).transactionId).sort()).toEqual(
        Array.from({ length: 20 }, (_, i) => `down-${i}`).sort(),
      );
    },
    60_000 + WEBHOOK_OUTAGE_MS,
  );

  const latestEndpoint = () =>
    database.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .orderBy('id', 'desc')
      .limit(1)
      .executeTakeFirstOrThrow();

  it('a receiver answering 500 is retried; past the deadline the delivery is given up and can be replayed', async () => {
    const r = await receiver();
    r.status = 500;
    const id = await register(r, ['batch.completed']);
    const w = worker({ ...FAST, giveUpAfterMs: 1_500 });
    await w.emit(database.db, [{ type: 'batch.completed', data: { batchId: 7 } }]);
    w.start();
    const deliveries = () =>
      call(adminSession.token, '/api/v2/webhooks/deliveries', { id }).then((res) => res.json().items);
    await waitUntil('given up', async () => (await deliveries())[0]?.status === 'FAILED');
    const [failed] = await deliveries();
    expect(failed).toMatchObject({ event: 'batch.completed', status: 'FAILED', lastStatusCode: 500 });
    expect(failed.attempts).toBeGreaterThanOrEqual(2);
    expect(failed.nextAttemptAt).toBeNull();
    expect(r.received).toEqual([]);
    // Fixed receiver; an operator replays it: same message id.
    r.status = 200;
    const replay = await call(adminSession.token, '/api/v2/webhooks/replay', { deliveryId: failed.id });
    expect(replay.json()).toEqual({ status: 'success', message: WEBHOOK_MESSAGES.replayed });
    await waitUntil('replayed delivery', () => r.received.length === 1);
    expect(r.received[0]?.id).toBe(failed.messageId);
    expect((await deliveries())[0]).toMatchObject({ status: 'DELIVERED', lastStatusCode: 200 });
  });

  it('two instances deliver each event once', async () => {
    const r = await receiver();
    await register(r, ['command.expired']);
    await device('356000000000103', null);
    await app.ctx.webhookDelivery.emit(
      database.db,
      Array.from({ length: 200 }, (_, i) => ({
        type: 'command.expired' as const,
        imei1: '356000000000103',
        data: { transactionId: `twice-${i}` },
      })),
    );
    const a = worker();
    const b = worker();
    await Promise.all([a.runOnce(), b.runOnce(), a.runOnce(), b.runOnce()]);
    await waitUntil('200 deliveries', () => r.received.length >= 200);
    await Promise.all([a.runOnce(), b.runOnce()]);
    const ids = r.received.map((x) => x.id);
    expect(ids).toHaveLength(200);
    expect(new Set(ids).size).toBe(200);
  });

  it("a retailer's endpoint receives only that retailer's devices' events", async () => {
    const retailerAdmin = await loginAs(
      app,
      await buildUser(database, { userlevel: 'ADMIN', retailerPhone: '9800000001' }),
    );
    const mine = await receiver();
    const lenderWide = await receiver();
    await register(mine, ['device.deenrolled'], retailerAdmin.token);
    await register(lenderWide, ['device.deenrolled']);
    await device('356000000000104', '9800000001');
    await device('356000000000105', '9800000002');
    await app.ctx.webhookDelivery.emit(database.db, [
      { type: 'device.deenrolled', imei1: '356000000000104', data: { imei1: '356000000000104' } },
      { type: 'device.deenrolled', imei1: '356000000000105', data: { imei1: '356000000000105' } },
    ]);
    await worker().runOnce();
    expect(mine.received.map((x) => (x.body.data as { imei1: string }).imei1)).toEqual(['356000000000104']);
    expect(lenderWide.received.map((x) => (x.body.data as { imei1: string }).imei1).sort()).toEqual([
      '356000000000104',
      '356000000000105',
    ]);
    // And the retailer's ADMIN does not see the lender-wide endpoint.
    const listed = (await call(retailerAdmin.token, '/api/v2/webhooks')).json().items as { url: string }[];
    expect(listed.map((e) => e.url)).toEqual([mine.url]);
  });

  it('announces a device offline for longer than the configured time, once per disconnection', async () => {
    const r = await receiver();
    await register(r, ['device.offline']);
    await device('356000000000106', null);
    await database.db
      .updateTable('devices')
      .set({
        online: false,
        claimstatus: 'ENROLLED',
        last_seen_at: new Date(Date.now() - 60 * 60_000),
        offline_since: new Date(Date.now() - 60 * 60_000),
      })
      .where('imei1', '=', '356000000000106')
      .execute();
    const w = worker();
    const announcer = new OfflineAnnouncer({
      db: database.db,
      log: app.log,
      events: w,
      offlineAfterMs: 30 * 60_000,
      giveUpAfterMs: FAST.giveUpAfterMs,
      pollMs: FAST.pollMs,
    });
    // Two sweeps, each followed by a delivery round: the second finds the disconnection announced.
    for (let round = 0; round < 2; round += 1) {
      await announcer.runOnce();
      await w.runOnce();
    }
    const offline = r.received.filter((x) => (x.body.data as { imei1: string }).imei1 === '356000000000106');
    expect(offline).toHaveLength(1);
    expect(offline[0]?.type).toBe('device.offline');
  });
});

describe('webhook URLs when private addresses are not allowed', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let session: Session;
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    app = await buildTestApp(database);
    session = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it.each([
    ['http://203.0.114.1/hooks', WEBHOOK_MESSAGES.badUrl],
    ['ftp://example.com/x', WEBHOOK_MESSAGES.badUrl],
    ['https://user:pw@203.0.114.1/x', WEBHOOK_MESSAGES.badUrl],
    ['https://127.0.0.1/hooks', WEBHOOK_MESSAGES.privateAddress],
    ['https://[::1]/hooks', WEBHOOK_MESSAGES.privateAddress],
    ['https://169.254.169.254/latest/meta-data', WEBHOOK_MESSAGES.privateAddress],
    ['https://[::ffff:10.0.0.1]/x', WEBHOOK_MESSAGES.privateAddress],
    ['https://localhost/hooks', WEBHOOK_MESSAGES.privateAddress],
    ['https://no-such-host.invalid/hooks', WEBHOOK_MESSAGES.unresolvable],
  ])('%s is refused with a clear message and nothing is written', async (url, message) => {
    const before = await fingerprint(database.db, ['webhook_endpoints', 'audit_log']);
    const response = await app.inject({
      method: 'POST',
      url: '/api/v2/webhooks',
      headers: { 'x-api-key': session.token },
      payload: { url, events: ['command.executed'] },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(message);
    expect(await fingerprint(database.db, ['webhook_endpoints', 'audit_log'])).toEqual(before);
  });

  it('a delivery to an endpoint whose name now resolves to a private address is refused at send time', async () => {
    // Registered while its name was public (written directly here), the name now points home: DNS
    // rebinding. The socket's own lookup refuses it; the delivery stays queued with the reason.
    const key = Buffer.alloc(32, 7);
    const row = await database.db
      .insertInto('webhook_endpoints')
      .values({
        url: 'https://localhost:1/h',
        events: ['command.failed'],
        secret_sealed: '',
        created_by: 't',
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(row.id);
    const secret = `whsec_${Buffer.alloc(24, 1).toString('base64')}`;
    await database.db
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: seal(key, `webhook_endpoints:${id}`, secret) })
      .where('id', '=', id)
      .execute();
    await app.ctx.webhookDelivery.stop();
    await app.ctx.webhookDelivery.emit(database.db, [{ type: 'command.failed', data: {} }]);
    const w = new WebhookDelivery({
      db: database.db,
      log: app.log,
      openSecret: (endpointId, sealed) => unseal(key, `webhook_endpoints:${endpointId}`, sealed),
      allowPrivate: false,
      timing: FAST,
    });
    await w.runOnce();
    const delivery = await database.db
      .selectFrom('webhook_deliveries')
      .select(['status', 'last_error', 'attempts'])
      .where('endpoint_id', '=', id)
      .executeTakeFirstOrThrow();
    expect(delivery).toMatchObject({ status: 'PENDING', attempts: 1 });
    expect(delivery.last_error).toMatch(/localhost resolves to .* which is not a public address/);
  });
});
