/**
 * One tenant's webhook endpoints cannot hold up another's. Endpoints that never answer
 * hold only their own slots (the lender's event arrives at once beside twelve of them), an endpoint that
 * keeps failing is paused by its circuit breaker and probed by one trial, and the 20-endpoint cap is each
 * tenant's own.
 */
import { type Session, WEBHOOK_MESSAGES } from '@lendlock/contract';
import { waitUntil } from '@lendlock/testkit';
import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_WEBHOOK_TIMING,
  LIMITS,
  pickDeliveries,
  WebhookDelivery,
  type WebhookTiming,
} from '../src/modules/webhooks/delivery';
import { type DueDelivery, deleteEndpoint } from '../src/modules/webhooks/repository';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';
import { Receiver, Tarpit } from './webhook-receiver';

describe('choosing what to claim', () => {
  const due = (endpoint: number, tenant: string | null, n: number, trial = false): DueDelivery[] =>
    Array.from({ length: n }, (_, i) => ({
      id: endpoint * 100 + i,
      endpoint_id: endpoint,
      retailer_phone: tenant,
      trial,
    }));
  const idle = () => ({ total: 0, byEndpoint: new Map<number, number>(), byTenant: new Map() });

  it('takes at most four per endpoint and sixteen per tenant, oldest first, so the lender still gets its own', () => {
    // A retailer's twenty endpoints with six due each, all older than the lender's one.
    const retailer = Array.from({ length: 20 }, (_, i) => due(i + 1, '9800000261', 6)).flat();
    const picked = pickDeliveries([...retailer, ...due(99, null, 1)], idle(), LIMITS);
    const retailers = picked.filter((d) => d.retailer_phone === '9800000261');
    expect(retailers).toHaveLength(LIMITS.perTenant);
    expect(picked.filter((d) => d.endpoint_id === 99)).toHaveLength(1);
    // Oldest first: the first endpoints' four each.
    expect(retailers.map((d) => d.endpoint_id)).toEqual(
      Array.from({ length: LIMITS.perTenant }, (_, i) => 1 + Math.floor(i / LIMITS.perEndpoint)),
    );
  });

  it('counts what is under way, stops at the instance total, and gives an open circuit one trial', () => {
    const underWay = {
      total: LIMITS.perEndpoint,
      byEndpoint: new Map([[1, LIMITS.perEndpoint]]),
      byTenant: new Map([[null, LIMITS.perEndpoint]]),
    };
    expect(
      pickDeliveries([...due(1, null, 2), ...due(2, null, 2)], underWay, LIMITS).map((d) => d.id),
    ).toEqual([200, 201]);
    expect(pickDeliveries(due(3, null, 2, true), idle(), LIMITS).map((d) => d.id)).toEqual([300]);
    expect(pickDeliveries(due(4, null, 2), idle(), { ...LIMITS, total: 1 })).toHaveLength(1);
  });
});

describe.each(databaseKinds())('webhook isolation on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let lender: Session;
  let retailer: Session;
  let otherRetailer: Session;
  const receivers: Receiver[] = [];
  const tarpits: Tarpit[] = [];
  const workers: WebhookDelivery[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, { webhookAllowPrivate: true });
    // The app's own worker is stopped: each test drives its own.
    await app.ctx.webhookDelivery.stop();
    lender = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    retailer = await loginAs(
      app,
      await buildUser(database, { userlevel: 'ADMIN', retailerPhone: '9800000261' }),
    );
    otherRetailer = await loginAs(
      app,
      await buildUser(database, { userlevel: 'ADMIN', retailerPhone: '9800000262' }),
    );
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.stop();
    for (const receiver of receivers.splice(0)) await receiver.stop();
    for (const tarpit of tarpits.splice(0)) await tarpit.stop();
    for (const { id } of await database.db
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('deleted_at', 'is', null)
      .execute())
      await deleteEndpoint(database.db, Number(id));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const call = (session: Session, url: string, payload?: object) =>
    app.inject({
      method: payload ? 'POST' : 'GET',
      url,
      headers: { 'x-api-key': session.token },
      ...(payload ? { payload } : {}),
    });

  const register = async (session: Session, url: string, events: string[]) => {
    const response = await call(session, '/api/v2/webhooks', { url, events });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { endpoint: { id: number }; secret: string };
  };

  const worker = (timing: WebhookTiming) => {
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

  const device = (imei1: string, retailerPhone: string | null) =>
    database.db
      .insertInto('devices')
      .values({ imei1, imei2: null, retailer_phone: retailerPhone, match_status: 'YES' })
      .onConflict((oc) => oc.column('imei1').doNothing())
      .execute();

  const deliveriesOf = (endpointIds: number[]) =>
    database.db
      .selectFrom('webhook_deliveries')
      .select(['id', 'status', 'attempts', 'give_up_at', 'last_status_code'])
      .where('endpoint_id', 'in', endpointIds)
      .orderBy('id')
      .execute();

  it("the lender's delivery arrives within 2 s beside twelve tarpits of a retailer, whose deliveries wait", async () => {
    const tarpitIds: number[] = [];
    for (let i = 0; i < 12; i++) {
      const tarpit = new Tarpit();
      await tarpit.start();
      tarpits.push(tarpit);
      tarpitIds.push((await register(retailer, tarpit.url, ['command.executed'])).endpoint.id);
    }
    const r = new Receiver();
    await r.start();
    receivers.push(r);
    r.secret = (await register(lender, r.url, ['command.executed'])).secret;
    const imei1 = '356000000026101';
    await device(imei1, '9800000261');
    // Each attempt to a tarpit waits 5 s for an answer; a failed one is tried again a minute later.
    const w = worker({ ...DEFAULT_WEBHOOK_TIMING, timeoutMs: 5_000, retryFirstMs: 60_000, pollMs: 100 });
    const event = (transactionId: string) => ({
      type: 'command.executed' as const,
      imei1,
      data: { transactionId, imei1, command: 'LOCK' },
    });
    // A backlog first: three events, each for the twelve tarpits and the lender.
    await w.emit(database.db, [event('backlog-1'), event('backlog-2'), event('backlog-3')]);
    w.start();
    // Twelve tarpits with three due each would take 36 slots: the retailer's share (16) holds first.
    const held = Math.min(12 * LIMITS.perEndpoint, LIMITS.perTenant);
    const openAtTarpits = () => tarpits.reduce((sum, t) => sum + t.open, 0);
    await waitUntil("the retailer's slots held by its tarpits", () => openAtTarpits() === held);
    await waitUntil("the lender's backlog", () => r.received.length === 3);

    // Now the event concerning both tenants: the tarpits still hold their connections.
    const emittedAt = Date.now();
    expect(await w.emit(database.db, [event('late')])).toBe(13);
    w.wake();
    await waitUntil('late', () =>
      r.received.some((x) => (x.body.data as { transactionId: string }).transactionId === 'late'),
    );
    const arrived = r.received.find(
      (x) => (x.body.data as { transactionId: string }).transactionId === 'late',
    );
    const elapsedMs = (arrived?.at ?? Number.POSITIVE_INFINITY) - emittedAt;
    console.info(`[${kind}] the lender's delivery beside 12 tarpits arrived ${elapsedMs} ms after its event`);
    expect(elapsedMs).toBeLessThan(2_000);
    // Still within the tarpits' first 5 s: four connections at most to each, the retailer's share in all,
    // and nothing was lost.
    expect(Math.max(...tarpits.map((t) => t.maxOpen))).toBeLessThanOrEqual(LIMITS.perEndpoint);
    expect(tarpits.reduce((sum, t) => sum + t.connections, 0)).toBe(held);
    expect(openAtTarpits()).toBe(held);
    const waiting = await deliveriesOf(tarpitIds);
    expect(waiting).toHaveLength(12 * 4);
    expect(waiting.every((d) => d.status === 'PENDING')).toBe(true);
    expect(waiting.filter((d) => d.attempts === 1)).toHaveLength(held);
    expect(waiting.filter((d) => d.attempts === 0)).toHaveLength(12 * 4 - held);
    expect(r.rejected).toEqual([]);
  }, 30_000);

  it('an endpoint failing K times in a row is paused for its cool-down, probed by one trial, and closed by a success', async () => {
    const r = new Receiver();
    await r.start();
    receivers.push(r);
    r.status = 500;
    const created = await register(lender, r.url, ['batch.completed']);
    r.secret = created.secret;
    const id = created.endpoint.id;
    const K = 3;
    const cooldownMs = 1_500;
    // Retries every 50 ms: during the cool-down every delivery is due again and again.
    const w = worker({
      ...DEFAULT_WEBHOOK_TIMING,
      retryFirstMs: 50,
      retryMaxMs: 50,
      pollMs: 50,
      breakerFailures: K,
      breakerCooldownMs: cooldownMs,
    });
    await w.emit(
      database.db,
      Array.from({ length: 5 }, (_, i) => ({ type: 'batch.completed' as const, data: { batchId: i } })),
    );
    const before = await deliveriesOf([id]);
    const endpoint = async () =>
      ((await call(lender, '/api/v2/webhooks')).json().items as Record<string, unknown>[]).find(
        (e) => e.id === id,
      );
    expect(await endpoint()).toMatchObject({
      circuitState: 'closed',
      circuitOpenUntil: null,
      consecutiveFailures: 0,
    });
    w.start();
    await waitUntil('the circuit open', async () => (await endpoint())?.circuitState === 'open');
    const opened = await endpoint();
    expect(opened?.circuitOpenUntil).toEqual(expect.any(String));
    // Attempts claimed before it opened have reached the receiver by now. Barrier: a round of the worker
    // of our own, which waits for the attempts under way.
    await w.runOnce();
    const hitsWhenOpened = r.hits;
    // K failures open it; attempts already under way (up to four per endpoint) may fail after.
    expect(hitsWhenOpened).toBeGreaterThanOrEqual(K);
    expect(hitsWhenOpened).toBeLessThanOrEqual(K + LIMITS.perEndpoint - 1);
    expect(await app.ctx.metrics.registry.getSingleMetricAsString('lendlock_webhook_circuits_open')).toMatch(
      /^lendlock_webhook_circuits_open 1$/m,
    );

    // During the cool-down: not attempted, nothing counted, nothing given up, deadlines unchanged. Barrier:
    // every delivery due again (its retry time past), then a round of the worker of our own, finished
    // within the cool-down.
    await waitUntil('every delivery due again', async () => {
      const due = await database.db
        .selectFrom('webhook_deliveries')
        .select('next_attempt_at')
        .where('endpoint_id', '=', id)
        .execute();
      return due.every((d) => new Date(d.next_attempt_at).getTime() <= Date.now());
    });
    await w.runOnce();
    expect(Date.parse(String((await endpoint())?.circuitOpenUntil))).toBeGreaterThan(Date.now());
    expect(r.hits).toBe(hitsWhenOpened);
    const paused = await deliveriesOf([id]);
    expect(paused.every((d) => d.status === 'PENDING')).toBe(true);
    expect(paused.reduce((sum, d) => sum + d.attempts, 0)).toBe(hitsWhenOpened);
    expect(paused.map((d) => d.give_up_at.getTime())).toEqual(before.map((d) => d.give_up_at.getTime()));

    // Cool-down over: one trial, which fails and opens the circuit again.
    await waitUntil('the trial', () => r.hits > hitsWhenOpened, cooldownMs + 5_000);
    // Barrier: a round of the worker of our own, after the trial's attempt has ended (it waits for it).
    await w.runOnce();
    expect(r.hits).toBe(hitsWhenOpened + 1);
    expect(await endpoint()).toMatchObject({ circuitState: 'open' });

    // The receiver is fixed: the next trial succeeds, the circuit closes, every delivery arrives.
    r.status = 200;
    await waitUntil(
      'all five delivered',
      async () => (await deliveriesOf([id])).every((d) => d.status === 'DELIVERED'),
      cooldownMs + 10_000,
    );
    expect(r.received).toHaveLength(5);
    expect(await endpoint()).toMatchObject({
      circuitState: 'closed',
      circuitOpenUntil: null,
      consecutiveFailures: 0,
    });
    expect((await deliveriesOf([id])).map((d) => d.status)).toEqual(Array(5).fill('DELIVERED'));
    expect(new Set(r.received.map((x) => x.id)).size).toBe(5);
    expect(await app.ctx.metrics.registry.getSingleMetricAsString('lendlock_webhook_circuits_open')).toMatch(
      /^lendlock_webhook_circuits_open 0$/m,
    );
  }, 30_000);

  it("the 20-endpoint cap is each tenant's: a retailer's 21st is refused, the lender and another retailer still register", async () => {
    const r = new Receiver();
    await r.start();
    receivers.push(r);
    for (let i = 0; i < 20; i++) await register(retailer, `${r.url}/${i}`, ['command.executed']);
    const before = await fingerprint(database.db, ['webhook_endpoints', 'audit_log']);
    const refused = await call(retailer, '/api/v2/webhooks', {
      url: `${r.url}/21`,
      events: ['command.executed'],
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toBe(WEBHOOK_MESSAGES.tooMany);
    expect(await fingerprint(database.db, ['webhook_endpoints', 'audit_log'])).toEqual(before);

    const lenders = await register(lender, `${r.url}/lender`, ['command.executed']);
    const others = await register(otherRetailer, `${r.url}/other`, ['command.executed']);
    const rows = await database.db
      .selectFrom('webhook_endpoints')
      .select(['id', 'retailer_phone'])
      .where('id', 'in', [lenders.endpoint.id, others.endpoint.id])
      .orderBy('id')
      .execute();
    expect(rows.map((row) => row.retailer_phone)).toEqual([null, '9800000262']);
  });
});
