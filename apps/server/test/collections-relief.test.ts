/**
 * The kill switch stops harm, not relief (issue 25 point 6): while collections are stopped the daily run
 * sends no reminder or lock, but a payment that clears a locked device's arrears still unlocks it, a paid
 * loan is still released (automatically, or queued and approved by an operator), and turning the switch
 * on cancels the queued reminders and locks, not a queued unlock. Checked on the simulated devices (what
 * they received, their state) and in the database.
 */
import {
  addDays,
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  type Session,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { CollectionsEngine } from '../src/modules/collections/engine';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';
import { buildUser, loginAs } from './factories';

const ZONE = 'Asia/Kolkata';
const BASE = '2031-03-01';
const day = (n: number) => addDays(BASE, n - 1);
const ist = (d: string, time: string) => new Date(`${d}T${time}:00+05:30`);

const POLICY: CollectionsPolicy = {
  ...DEFAULT_COLLECTIONS_POLICY,
  enabled: true,
  timeZone: ZONE,
  reminders: { preDaysBefore: 0, due: false, postEveryDays: 1 },
  lockAfterDaysOverdue: 2,
  unlockOnPayment: true,
  release: 'AUTO',
  quietHours: { start: '21:00', end: '09:00' },
};

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

  const api = (token: string, method: 'GET' | 'PUT' | 'POST', url: string, payload?: object) =>
    suite.server.app.inject({
      method,
      url,
      headers: { 'x-api-key': token },
      ...(payload ? { payload } : {}),
    });
  const killSwitch = async (on: boolean) => {
    const response = await api(
      on ? suite.admin.token : superadmin.token,
      'PUT',
      '/api/v2/collections/kill-switch',
      {
        on,
        reason: on ? 'wrong import' : 'fixed',
      },
    );
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { cancelled: number; message: string };
  };
  const pay = async (name: string, amount: string) => {
    const paymentRef = `P-${kind}-${name}-${clock.getTime()}`;
    const response = await api(suite.admin.token, 'POST', '/api/v2/payments', {
      paymentRef,
      loanRef: loanRef(name),
      amount,
      paidAt: new Date().toISOString(),
    });
    expect(response.statusCode, response.body).toBe(200);
    await sql`UPDATE loan_payments SET received_at = ${clock} WHERE payment_ref = ${paymentRef}`.execute(
      suite.database.db,
    );
  };
  const commandsOf = (name: string) =>
    suite.database.db
      .selectFrom('commands')
      .select(['command', 'status', 'result'])
      .where('imei1', '=', device(name).imei)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    superadmin = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { userlevel: 'SUPERADMIN' }),
    );
    for (const name of Object.keys(LOANS)) {
      const d = simulatedDevice(suite.server);
      suite.devices.push(d);
      await d.register();
      if (name !== 'offline') await d.connect();
      fleet.set(name, d);
    }
    const imported = await api(suite.admin.token, 'POST', '/api/v2/loans', {
      loans: Object.entries(LOANS).map(([name, due]) => ({
        loanRef: loanRef(name),
        imei: device(name).imei,
        customerName: `Customer ${name}`,
        currency: 'INR',
        instalments: due.map((n) => ({ dueDate: day(n), amount: '1000.00' })),
      })),
    });
    expect(imported.statusCode, imported.body).toBe(200);
    const saved = await api(superadmin.token, 'PUT', '/api/v2/collections/policy', { policy: POLICY });
    expect(saved.statusCode, saved.body).toBe(200);
    engine = new CollectionsEngine({
      db: suite.database.db,
      commands: suite.server.app.ctx.commands,
      log: suite.server.app.log,
      events: suite.server.app.ctx.webhookDelivery,
      oneShotTtlMs: 72 * 3_600_000,
      now: () => clock,
    });
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
    await vi.waitFor(async () => {
      const row = await suite.database.db
        .selectFrom('devices')
        .select('online')
        .where('imei1', '=', device('lockedB').imei)
        .executeTakeFirstOrThrow();
      expect(row.online).toBe(false);
    });
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
    const plan = (
      await api(suite.admin.token, 'POST', '/api/v2/collections/plan', { date: day(4), limit: 100 })
    ).json();
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
    const saved = await api(superadmin.token, 'PUT', '/api/v2/collections/policy', {
      policy: { ...POLICY, release: 'APPROVAL' },
    });
    expect(saved.statusCode, saved.body).toBe(200);
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
