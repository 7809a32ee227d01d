/**
 * Whose a lock is, and an operator's decision.
 *
 * - A phone locked by collections, formatted and registered again, is locked again by the reconcile; the
 *   lock is still collections' own, so the payment that clears the arrears unlocks it.
 * - An operator's unlock of a loan's device stands: the collections runs skip the loan's lock (Today's
 *   Plan says why) until an instalment due after the unlock is overdue as long as the policy's lock rule
 *   asks; then collections lock it again.
 * - An operator's unlock cancelled before it was sent: the lock is collections' again, and a payment lifts
 *   it.
 *
 * Days are counted from the database's today (UTC, the policy's zone): an operator's unlock is recorded
 * at the database's clock, the engine's clock is injected.
 */
import {
  addDays,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  type DeviceState,
  type PlanItem,
  type Session,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CollectionsEngine } from '../src/modules/collections/engine';
import {
  apiCaller,
  enrol,
  importLoans,
  payAt,
  requestPlan,
  savePolicy,
  signedIn,
  testEngine,
  waitOnline,
} from './collections';
import { channelKinds, databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';

const POLICY: CollectionsPolicy = {
  ...DEFAULT_COLLECTIONS_POLICY,
  enabled: true,
  timeZone: 'UTC',
  reminders: { preDaysBefore: 0, due: false, postEveryDays: 0 },
  lockAfterDaysOverdue: 5,
  unlockOnPayment: true,
  release: 'OFF',
  quietHours: null,
  excludedImeis: [],
  excludedRetailers: [],
};

const combos = databaseKinds().flatMap((db) => channelKinds().map((channel) => [db, channel] as const));

describe.each(combos)('collections: the cause of a lock on %s with the %s broker', (kind, channel) => {
  const suite = deviceSuite(kind, { collectionsWorkers: false }, channel);
  let superadmin: Session;
  let engine: CollectionsEngine;
  let today: string;
  /** Noon of a day, UTC. */
  const noon = (d: string) => new Date(`${d}T12:00:00Z`);
  let clock = new Date();

  const api = apiCaller(() => suite.server.app);

  beforeAll(async () => {
    superadmin = await signedIn(suite.server.app, suite.database);
    const row = await sql<{ d: string }>`SELECT (now() AT TIME ZONE 'UTC')::date::text AS d`.execute(
      suite.database.db,
    );
    today = row.rows[0]?.d as string;
    await savePolicy(suite.server.app, superadmin.token, POLICY);
    engine = testEngine(suite.server.app, { now: () => clock });
  });

  /** An online device with a loan of these instalments (days from today, 1000.00 each). */
  const deviceWithLoan = async (name: string, dueIn: number[]) => {
    const device = await enrol(suite, simulatedDevice(suite.server));
    await waitOnline(suite.server.app, device.imei, true);
    await importLoans(suite.server.app, suite.admin.token, [
      {
        loanRef: `C-${kind}-${channel}-${name}`,
        imei: device.imei,
        customerName: `Customer ${name}`,
        currency: 'INR',
        instalments: dueIn.map((n) => ({ dueDate: addDays(today, n), amount: '1000.00' })),
      },
    ]);
    return device;
  };

  /** The day's run on `day` (the engine's clock at noon), done. */
  const runOn = async (day: string) => {
    clock = noon(day);
    expect((await engine.runDaily()).state, day).toBe('DONE');
  };

  const lockState = (device: SimulatedDevice, locked: DeviceState['locked']) =>
    vi.waitFor(() => expect(device.state.locked).toBe(locked), { timeout: 10_000, interval: 50 });

  /** The day's actions of a device, as `KIND:state:skip`. */
  const actionsOn = async (device: SimulatedDevice, day: string) =>
    (
      await sql<{ kind: string; state: string; skip_reason: string | null }>`
        SELECT kind, state, skip_reason FROM collection_actions
        WHERE imei1 = ${device.imei} AND action_date = ${day}::date ORDER BY id`.execute(suite.database.db)
    ).rows.map((a) => `${a.kind}:${a.state}:${a.skip_reason ?? ''}`);

  it('a lock collections imposed is lifted by the payment, after the phone was formatted and re-enrolled', async () => {
    const { db } = suite.database;
    const device = await deviceWithLoan('formatted', [-10, 20]);
    // Yesterday's run locks it (9 days overdue).
    await runOn(addDays(today, -1));
    await lockState(device, true);

    // The phone is formatted: an operator says so, and its agent registers again from a clean phone.
    await device.dropOffline();
    const formatted = await api(suite.admin.token, 'POST', '/api/formattedDevice.php', {
      imei: device.imei,
      user: suite.admin.email,
    });
    expect(formatted.statusCode, formatted.body).toBe(200);
    await device.register();
    expect(device.state.locked).toBe(false);
    await device.connect();
    // The reconcile locks it again: the lock is still collections' own.
    await lockState(device, true);

    // The whole arrears paid today: the watcher's next poll unlocks the phone.
    clock = noon(today);
    await payAt(
      suite.server.app,
      suite.admin.token,
      {
        paymentRef: `P-${kind}-${channel}-formatted`,
        loanRef: `C-${kind}-${channel}-formatted`,
        amount: '1000.00',
      },
      clock,
    );
    clock = new Date(clock.getTime() + 2_000);
    expect(await engine.watchPayments()).toBe(1);
    await lockState(device, false);
    expect(device.received.at(-1)?.command).toBe('UNLOCK');
    await vi.waitFor(async () => {
      const unlock = await db
        .selectFrom('commands')
        .select(['command', 'interface', 'status', 'cause'])
        .where('imei1', '=', device.imei)
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(unlock).toEqual({ command: 'UNLOCK', interface: 'C', status: 'EXECUTED', cause: 'collections' });
    });
    // The reconcile's lock: the system's command, carrying the cause of the lock it restored.
    const relock = await db
      .selectFrom('commands')
      .select(['interface', 'user_label', 'cause'])
      .where('imei1', '=', device.imei)
      .where('command', '=', 'LOCK')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(relock).toEqual({ interface: 'S', user_label: 'system', cause: 'collections' });
  });

  it('an operator’s unlock stands until an instalment due after it is missed', async () => {
    const device = await deviceWithLoan('operator', [-10, 3, 40]);
    // (The day before yesterday: yesterday's run is the first test's.)
    await runOn(addDays(today, -2));
    await lockState(device, true);

    // The operator unlocks the phone today, before the day's run.
    const unlocked = await api(suite.admin.token, 'POST', '/api/locknotification.php', {
      imei: device.imei,
      action: 'unlock',
      user: suite.admin.email,
    });
    expect(unlocked.statusCode, unlocked.body).toBe(200);
    await lockState(device, false);

    // Today's Plan says why the lock is not taken, and counts it; the dry run too.
    const planOf = async (day: string, policy?: CollectionsPolicy) => {
      const body = await requestPlan(suite.server.app, suite.admin.token, {
        date: day,
        filter: 'SKIPPED',
        limit: 1000,
        ...(policy ? { policy } : {}),
      });
      return {
        mine: (body.items as PlanItem[])
          .filter((i) => i.imei === device.imei)
          .map((i) => [i.action, i.skipped]),
        counted: body.counts.skipped.operatorUnlock as number,
      };
    };
    for (const plan of [await planOf(today), await planOf(today, { ...POLICY, lockAfterDaysOverdue: 3 })]) {
      expect(plan.mine).toEqual([['LOCK', 'operatorUnlock']]);
      expect(plan.counted).toBe(1);
    }

    // Today's run and the next days' leave it unlocked, on record.
    await runOn(today);
    expect(await actionsOn(device, today)).toEqual(['LOCK:SKIPPED:operatorUnlock']);
    // The instalment due in 3 days is missed; 4 days overdue on day 7 (the policy waits 5).
    await runOn(addDays(today, 7));
    expect(await actionsOn(device, addDays(today, 7))).toEqual(['LOCK:SKIPPED:operatorUnlock']);
    expect(device.state.locked).toBe(false);
    expect(device.received.filter((m) => m.command === 'LOCK')).toHaveLength(1);

    // 5 days overdue: the operator's decision no longer covers it, collections lock again.
    await runOn(addDays(today, 8));
    expect(await actionsOn(device, addDays(today, 8))).toEqual(['LOCK:ISSUED:']);
    await lockState(device, true);
  });

  it('a cancelled operator’s unlock gives the lock back to collections: the payment lifts it', async () => {
    const { db } = suite.database;
    const device = await deviceWithLoan('cancelled', [-10, 30]);
    // (Three days ago: the other tests' runs are yesterday's and the day before's.)
    await runOn(addDays(today, -3));
    await lockState(device, true);
    await device.dropOffline();
    await waitOnline(suite.server.app, device.imei, false);
    const unlocked = await api(suite.admin.token, 'POST', '/api/locknotification.php', {
      imei: device.imei,
      action: 'unlock',
      user: suite.admin.email,
    });
    expect(unlocked.statusCode, unlocked.body).toBe(200);
    const causeOf = async () =>
      (
        await sql<{ cause: string | null }>`SELECT desired_cause -> 'locked' ->> 'cause' AS cause FROM devices
          WHERE imei1 = ${device.imei}`.execute(db)
      ).rows[0]?.cause;
    expect(await causeOf()).toBe('operator');
    const cancelled = await api(suite.admin.token, 'POST', '/api/v2/cancelCommand', {
      transactionId: unlocked.json().transactionId,
    });
    expect(cancelled.statusCode, cancelled.body).toBe(200);
    expect(await causeOf()).toBe('collections');

    clock = noon(today);
    await payAt(
      suite.server.app,
      suite.admin.token,
      {
        paymentRef: `P-${kind}-${channel}-cancelled`,
        loanRef: `C-${kind}-${channel}-cancelled`,
        amount: '1000.00',
      },
      clock,
    );
    clock = new Date(clock.getTime() + 2_000);
    expect(await engine.watchPayments()).toBe(1);
    await device.connect();
    await lockState(device, false);
  });
});
