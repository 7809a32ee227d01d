/**
 * The kill switch stops harm, not relief: while collections are stopped the daily run
 * sends no reminder or lock, but a payment that clears a locked device's arrears still unlocks it, a paid
 * loan is still released (automatically, or queued and approved by an operator), and turning the switch
 * on cancels the queued reminders and locks, not a queued unlock. Checked on the simulated devices (what
 * they received, their state) and in the database.
 */
import { addDays, COLLECTIONS_MESSAGES, type Session } from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CollectionsEngine } from '../src/modules/collections/engine';
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
import { deviceSuite, simulatedDevice } from './devices';

const BASE = '2031-03-01';
const day = (n: number) => addDays(BASE, n - 1);

const POLICY = lenderPolicy({
  reminders: { preDaysBefore: 0, due: false, postEveryDays: 1 },
  lockAfterDaysOverdue: 2,
});

describe.each(databaseKinds())('the kill switch stops harm, not relief, on %s', (kind) => {
  const suite = deviceSuite(kind, { collectionsWorkers: false });
  let superadmin: Session;
  let engine: CollectionsEngine;
  let clock = ist(day(1), '10:00');
  const fleet = new Map<string, SimulatedDevice>();
  // name → its loan: two instalments (due day 1 and day 20), or one (day 20) to pay off at once.
  const LOANS = {
    lockedA: [1, 20],
    lockedB: [1, 20],
    overdue: [1, 20],
    offline: [1, 20],
    paidOff: [20],
    approval: [20],
  } as const;
  const loanRef = (name: string) => `K-${kind}-${name}`;
  const device = (name: string) => fleet.get(name) as SimulatedDevice;

  const api = apiCaller(() => suite.server.app);
  const killSwitch = (on: boolean) =>
    setKillSwitch(
      suite.server.app,
      on ? suite.admin.token : superadmin.token,
      on,
      on ? 'wrong import' : 'fixed',
    );
  const pay = (name: string, amount: string) =>
    payAt(
      suite.server.app,
      suite.admin.token,
      { paymentRef: `P-${kind}-${name}-${clock.getTime()}`, loanRef: loanRef(name), amount },
      clock,
    );
  const commandsOf = (name: string) =>
    suite.database.db
      .selectFrom('commands')
      .select(['command', 'status', 'result'])
      .where('imei1', '=', device(name).imei)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    superadmin = await signedIn(suite.server.app, suite.database);
    for (const name of Object.keys(LOANS))
      fleet.set(name, await enrol(suite, simulatedDevice(suite.server), name === 'offline'));
    await importLoans(
      suite.server.app,
      suite.admin.token,
      Object.entries(LOANS).map(([name, due]) => ({
        loanRef: loanRef(name),
        imei: device(name).imei,
        customerName: `Customer ${name}`,
        currency: 'INR',
        instalments: due.map((n) => ({ dueDate: day(n), amount: '1000.00' })),
      })),
    );
    await savePolicy(suite.server.app, superadmin.token, POLICY);
    engine = testEngine(suite.server.app, { now: () => clock });
  });

  it('unlocks on payment and releases while stopped; sends no lock; cancels harm only', async () => {
    // Day 3: the overdue loans' devices are reminded and locked by the daily run (the offline one's
    // reminder and lock stay queued).
    clock = ist(day(3), '10:00');
    expect((await engine.runDaily()).state).toBe('DONE');
    for (const name of ['lockedA', 'lockedB', 'overdue'])
      await vi.waitFor(() => expect(device(name).state.locked).toBe(true), { timeout: 10_000 });

    // lockedB goes offline and pays: its UNLOCK is queued; then the kill switch goes on. The offline
    // device's queued reminder and lock are cancelled; the queued unlock is relief: it stays queued, and
    // reaches the device when it is back.
    await device('lockedB').disconnect();
    await waitOnline(suite.server.app, device('lockedB').imei, false);
    clock = ist(day(3), '12:00');
    await pay('lockedB', '1000.00');
    clock = new Date(clock.getTime() + 2_000);
    expect(await engine.watchPayments()).toBe(1);
    const on = await killSwitch(true);
    expect(on.message).toBe(COLLECTIONS_MESSAGES.killSwitchOn);
    expect(on.cancelled).toBe(2);
    expect((await commandsOf('offline')).map((c) => [c.command, c.status, c.result])).toEqual([
      ['NOTIFY', 'CANCELLED', COLLECTIONS_MESSAGES.stopped],
      ['LOCK', 'CANCELLED', COLLECTIONS_MESSAGES.stopped],
    ]);
    expect((await commandsOf('lockedB')).map((c) => [c.command, c.status])).toEqual([
      ['NOTIFY', 'EXECUTED'],
      ['LOCK', 'EXECUTED'],
      ['UNLOCK', 'QUEUED'],
    ]);
    await device('lockedB').connect();
    await vi.waitFor(() => expect(device('lockedB').state.locked).toBe(false), { timeout: 10_000 });

    // While stopped: lockedA pays and is unlocked; paidOff pays its last instalment and is released.
    clock = ist(day(3), '14:00');
    await pay('lockedA', '1000.00');
    await pay('paidOff', '1000.00');
    clock = new Date(clock.getTime() + 2_000);
    expect(await engine.watchPayments()).toBe(2);
    await vi.waitFor(() => expect(device('lockedA').state.locked).toBe(false), { timeout: 10_000 });
    await vi.waitFor(() => expect(device('paidOff').state.released).toBe(true), { timeout: 10_000 });

    // The plan while stopped: reminders and locks skipped for the kill switch, relief not.
    const plan = await requestPlan(suite.server.app, suite.admin.token, { date: day(4), limit: 100 });
    expect(plan.killSwitch).toBe(true);
    expect(plan.counts.LOCK).toBe(0);
    expect(plan.counts.skipped.killSwitch).toBeGreaterThan(0);

    // The next day's run sends nothing: no Post reminder to the overdue device.
    const received = device('overdue').received.length;
    clock = ist(day(4), '10:00');
    expect((await engine.runDaily()).state).toBe('NOT_DUE');
    const dayFour = await suite.database.db
      .selectFrom('collection_actions')
      .select(['kind', 'state'])
      .where('action_date', '=', day(4))
      .execute();
    expect(dayFour).toEqual([]);
    expect(device('overdue').received).toHaveLength(received);
  });

  it('queues a release for approval and an operator approves it while stopped', async () => {
    await savePolicy(suite.server.app, superadmin.token, { ...POLICY, release: 'APPROVAL' });
    clock = ist(day(4), '11:00');
    await pay('approval', '1000.00');
    clock = new Date(clock.getTime() + 2_000);
    expect(await engine.watchPayments()).toBe(0); // queued, not sent
    const queue = (await api(suite.admin.token, 'GET', '/api/v2/collections/releases')).json().items;
    expect(queue).toMatchObject([{ imei: device('approval').imei, state: 'AWAITING_APPROVAL' }]);
    const approved = await api(
      suite.admin.token,
      'POST',
      `/api/v2/collections/releases/${queue[0].id}/approve`,
      {},
    );
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({
      message: COLLECTIONS_MESSAGES.releaseApproved,
      release: { state: 'APPROVED' },
    });
    await vi.waitFor(() => expect(device('approval').state.released).toBe(true), { timeout: 10_000 });
    expect((await api(suite.admin.token, 'GET', '/api/v2/collections/kill-switch')).json().on).toBe(true);
  });
});
