/**
 * A failed automated action is retried and seen: a device whose locks always fail gets
 * its LOCK retried after 5, 15 and 45 minutes (4 attempts in all), then the action is FAILED; each failed
 * attempt is counted (`lendlock_collections_failed_total`), announced by webhook
 * (`collections.action.failed`), shown in Today's Plan (Retrying, then Failed, not Done) and in the device's
 * failed automated actions (Device Details). A lock whose loan is paid before its retry is not retried;
 * a lock's retry waits while the kill switch is on and in quiet hours, and is given up when its day ends;
 * a failed unlock on payment (relief) is retried even while the kill switch is on.
 */
import { addDays, COLLECTIONS_RETRY, type Session } from '@lendlock/contract';
import { SimulatedDevice } from '@lendlock/device-sim';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type CollectionsEngine, RETRY_NOTES } from '../src/modules/collections/engine';
import {
  apiCaller,
  enrol,
  importLoans,
  ist,
  lenderPolicy,
  payAt,
  requestPlan,
  savePolicy,
  setKillSwitch,
  signedIn,
  testEngine,
  waitOnline,
} from './collections';
import { databaseKinds } from './db';
import { deviceSuite, randomProfile, simulatedDevice, TEST_ENROLLMENT_SECRET } from './devices';
import { Receiver } from './webhook-receiver';

const BASE = '2031-05-01';
const day = (n: number) => addDays(BASE, n - 1);
const minutes = (date: Date, n: number) => new Date(date.getTime() + n * 60_000);

/** The first instalment's day of each loan (default day 1): each device is first locked 2 days after. */
const DUE: Record<string, number> = { waiting: 3, relief: 3, cancelled: 5 };

const POLICY = lenderPolicy({
  reminders: { preDaysBefore: 0, due: false, postEveryDays: 0 },
  lockAfterDaysOverdue: 2,
});

describe.each(databaseKinds())('failed automated actions on %s', (kind) => {
  const suite = deviceSuite(kind, { collectionsWorkers: false, webhookAllowPrivate: true });
  let superadmin: Session;
  let retailerAdmin: Session;
  let engine: CollectionsEngine;
  let receiver: Receiver;
  let clock = ist(day(1), '10:00');
  const fleet = new Map<string, SimulatedDevice>();
  const device = (name: string) => fleet.get(name) as SimulatedDevice;
  const loanRef = (name: string) => `F-${kind}-${name}`;

  const api = apiCaller(() => suite.server.app);
  const commandsOf = async (name: string, command = 'LOCK') =>
    (
      await suite.database.db
        .selectFrom('commands')
        .select(['command', 'status', 'interface'])
        .where('imei1', '=', device(name).imei)
        .orderBy('id')
        .execute()
    ).filter((c) => c.command === command);
  const locks = (name: string) => commandsOf(name, 'LOCK');
  /** Every command of the device settled (acknowledged by the simulated device). */
  const settled = (name: string) =>
    vi.waitFor(
      async () => {
        const all = [...(await locks(name)), ...(await commandsOf(name, 'UNLOCK'))];
        const pending = all.filter((c) => !['FAILED', 'EXECUTED'].includes(c.status));
        expect(pending).toEqual([]);
      },
      { timeout: 10_000 },
    );
  const action = (name: string, kind = 'LOCK') =>
    suite.database.db
      .selectFrom('collection_actions')
      .select(['state', 'attempts', 'note'])
      .where('imei1', '=', device(name).imei)
      .where('kind', '=', kind)
      .executeTakeFirstOrThrow();
  const pay = (name: string) =>
    payAt(
      suite.server.app,
      suite.admin.token,
      { paymentRef: `P-${kind}-${name}`, loanRef: loanRef(name), amount: '1000.00' },
      clock,
    );
  /** The relief device fails its commands while this is set. */
  let reliefFails = false;
  const planItem = async (name: string) => {
    const plan = await requestPlan(suite.server.app, suite.admin.token, { date: day(3), limit: 100 });
    return (plan.items as { imei: string; action: string; done: boolean; failure: unknown }[]).find(
      (i) => i.imei === device(name).imei && i.action === 'LOCK',
    );
  };
  const failedMetric = async () => {
    const text = (await suite.server.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text
      .split('\n')
      .find((l) => l.startsWith('lendlock_collections_failed_total{action="LOCK"}'));
    return Number(line?.split(' ')[1]);
  };
  const failedEvents = async (name: string) =>
    (
      await suite.database.db
        .selectFrom('webhook_deliveries')
        .select(['event', 'payload'])
        .where('event', '=', 'collections.action.failed')
        .orderBy('id')
        .execute()
    )
      .map((row) => (row.payload as { data: Record<string, unknown> }).data)
      .filter((data) => data.imei1 === device(name).imei);

  beforeAll(async () => {
    superadmin = await signedIn(suite.server.app, suite.database);
    retailerAdmin = await signedIn(suite.server.app, suite.database, {
      userlevel: 'ADMIN',
      retailerPhone: '9000000077',
    });
    receiver = new Receiver();
    await receiver.start();
    const endpoint = await api(suite.admin.token, 'POST', '/api/v2/webhooks', {
      url: receiver.url,
      events: ['collections.action.failed'],
    });
    expect(endpoint.statusCode, endpoint.body).toBe(200);
    receiver.secret = endpoint.json().secret;
    for (const name of ['failing', 'paying', 'waiting', 'relief', 'cancelled']) {
      const d =
        name === 'relief'
          ? new SimulatedDevice(randomProfile(), {
              server: suite.server.url,
              enrollmentSecret: TEST_ENROLLMENT_SECRET,
              failRate: 0.5,
              random: () => (reliefFails ? 0 : 1),
            })
          : simulatedDevice(suite.server, { failRate: 1 });
      fleet.set(name, await enrol(suite, d));
    }
    await importLoans(
      suite.server.app,
      suite.admin.token,
      [...fleet.keys()].map((name) => ({
        loanRef: loanRef(name),
        imei: device(name).imei,
        customerName: `Customer ${name}`,
        currency: 'INR',
        instalments: [
          { dueDate: day(DUE[name] ?? 1), amount: '1000.00' },
          { dueDate: day(20), amount: '1000.00' },
        ],
      })),
    );
    await savePolicy(suite.server.app, superadmin.token, POLICY);
    engine = testEngine(suite.server.app, {
      now: () => clock,
      failed: suite.server.app.ctx.metrics.collectionsActionFailed,
    });
  });
  afterAll(async () => {
    await receiver?.stop();
  });

  it('retries a failing LOCK after 5, 15 and 45 minutes, then shows it Failed, counted and announced', async () => {
    const start = ist(day(3), '10:00');
    clock = start;
    expect((await engine.runDaily()).state).toBe('DONE');
    await settled('failing');
    await settled('paying');
    expect(await locks('failing')).toEqual([{ command: 'LOCK', status: 'FAILED', interface: 'C' }]);
    // `paying` pays at once: its failed lock is not retried (below).
    await pay('paying');

    // The failure is seen: Retrying (1 of 4) in the plan, not Done.
    await engine.retryFailed();
    expect(await action('failing')).toMatchObject({ state: 'RETRYING', attempts: 1 });
    expect(await planItem('failing')).toMatchObject({
      done: true,
      failure: { state: 'RETRYING', attempts: 1, of: COLLECTIONS_RETRY.maxAttempts },
    });
    // Not before its time.
    clock = minutes(start, 4);
    await engine.retryFailed();
    expect(await locks('failing')).toHaveLength(1);

    let at = start;
    for (const [index, wait] of COLLECTIONS_RETRY.backoffMinutes.entries()) {
      at = minutes(at, wait);
      clock = at;
      await engine.retryFailed(); // the retry goes out
      expect(await locks('failing')).toHaveLength(index + 2);
      await settled('failing');
      await engine.retryFailed(); // and its failure is seen
    }
    expect(await locks('failing')).toEqual(
      Array.from({ length: COLLECTIONS_RETRY.maxAttempts }, () => ({
        command: 'LOCK',
        status: 'FAILED',
        interface: 'C',
      })),
    );
    expect(await action('failing')).toMatchObject({
      state: 'FAILED',
      attempts: 4,
      note: 'simulated failure',
    });
    expect(await planItem('failing')).toMatchObject({
      done: true,
      failure: { state: 'FAILED', attempts: 4 },
    });
    // Nothing more: the action is given up for the day.
    clock = minutes(at, 120);
    await engine.retryFailed();
    expect(await locks('failing')).toHaveLength(4);

    // Counted (each failed attempt) and announced, each attempt once.
    const events = await failedEvents('failing');
    expect(events.map((e) => [e.attempts, e.final])).toEqual([
      [1, false],
      [2, false],
      [3, false],
      [4, true],
    ]);
    expect(events[3]).toMatchObject({
      action: 'LOCK',
      loanRef: loanRef('failing'),
      maxAttempts: 4,
      retryAt: null,
      result: 'simulated failure',
    });
    await vi.waitFor(
      () =>
        expect(
          receiver.received.filter(
            (r) => (r.body.data as { imei1?: string }).imei1 === device('failing').imei,
          ),
        ).toHaveLength(4),
      { timeout: 15_000 },
    );

    // The lock of the loan paid meanwhile: seen failed once, not retried (the plan no longer asks for it).
    expect(await locks('paying')).toHaveLength(1);
    expect(await action('paying')).toMatchObject({ state: 'FAILED', attempts: 1 });
    expect(await failedMetric()).toBe(5);

    // Device Details: the device's failed automated actions; another retailer's user sees none.
    const shown = await api(
      suite.admin.token,
      'GET',
      `/api/v2/collections/failures?imei=${device('failing').imei}`,
    );
    expect(shown.statusCode, shown.body).toBe(200);
    expect(shown.json().items).toMatchObject([
      {
        imei: device('failing').imei,
        action: 'LOCK',
        state: 'FAILED',
        attempts: 4,
        maxAttempts: 4,
        result: 'simulated failure',
        loanRef: loanRef('failing'),
      },
    ]);
    const foreign = await api(
      retailerAdmin.token,
      'GET',
      `/api/v2/collections/failures?imei=${device('failing').imei}`,
    );
    expect(foreign.statusCode).toBe(200);
    expect(foreign.json().items).toEqual([]);
  });

  it('a lock waits out the kill switch and the quiet hours, then its day ends; relief is retried at once', async () => {
    // Day 5: `waiting` and `relief` are 2 days overdue: locked by the run (waiting's lock fails).
    const start = ist(day(5), '10:00');
    clock = start;
    expect((await engine.runDaily()).state).toBe('DONE');
    await settled('waiting');
    await settled('relief');
    await vi.waitFor(() => expect(device('relief').state.locked).toBe(true), { timeout: 10_000 });
    await engine.retryFailed();
    expect(await action('waiting')).toMatchObject({ state: 'RETRYING', attempts: 1 });

    // Stopped: relief's unlock on payment goes, fails, and is retried anyway; waiting's lock waits.
    await setKillSwitch(suite.server.app, suite.admin.token, true, 'test');
    reliefFails = true;
    clock = minutes(start, 1);
    await pay('relief');
    clock = minutes(start, 2);
    expect(await engine.watchPayments()).toBe(1);
    await settled('relief');
    await engine.retryFailed();
    expect(await action('relief', 'UNLOCK')).toMatchObject({ state: 'RETRYING', attempts: 1 });
    reliefFails = false;
    clock = minutes(start, 30);
    await engine.retryFailed();
    await vi.waitFor(() => expect(device('relief').state.locked).toBe(false), { timeout: 10_000 });
    await settled('relief');
    await engine.retryFailed();
    expect(await action('relief', 'UNLOCK')).toMatchObject({ state: 'ISSUED', attempts: 2 });
    expect(await locks('waiting')).toHaveLength(1);

    // Resumed, but in the quiet hours: still waiting.
    await setKillSwitch(suite.server.app, superadmin.token, false, 'ok');
    clock = ist(day(5), '21:30');
    await engine.retryFailed();
    expect(await locks('waiting')).toHaveLength(1);
    expect(await action('waiting')).toMatchObject({ state: 'RETRYING', attempts: 1 });

    // The next day: given up, announced, never sent again.
    clock = ist(day(6), '08:00');
    await engine.retryFailed();
    expect(await locks('waiting')).toHaveLength(1);
    expect(await action('waiting')).toMatchObject({
      state: 'FAILED',
      attempts: 1,
      note: RETRY_NOTES.dayEnded,
    });
    expect((await failedEvents('waiting')).map((e) => [e.attempts, e.final])).toEqual([
      [1, false],
      [1, true],
    ]);
  });

  it('a retry an operator cancels is given up, not sent again', async () => {
    const start = ist(day(7), '10:00');
    clock = start;
    expect((await engine.runDaily()).state).toBe('DONE');
    await settled('cancelled');
    await engine.retryFailed();
    expect(await action('cancelled')).toMatchObject({ state: 'RETRYING', attempts: 1 });
    await device('cancelled').disconnect();
    await waitOnline(suite.server.app, device('cancelled').imei, false);
    clock = minutes(start, 5);
    expect(await engine.retryFailed()).toBeGreaterThanOrEqual(1);
    const retry = await suite.database.db
      .selectFrom('commands')
      .select(['transaction_id', 'status'])
      .where('imei1', '=', device('cancelled').imei)
      .where('command', '=', 'LOCK')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(retry.status).toBe('QUEUED');
    const cancel = await api(suite.admin.token, 'POST', '/api/v2/cancelCommand', {
      transactionId: retry.transaction_id,
    });
    expect(cancel.statusCode, cancel.body).toBe(200);
    await engine.retryFailed();
    expect(await action('cancelled')).toMatchObject({ state: 'FAILED', attempts: 2 });
    clock = minutes(start, 120);
    await engine.retryFailed();
    expect(await locks('cancelled')).toHaveLength(2);
  });
});
