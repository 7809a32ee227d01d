/**
 * The simulated month: a demo-like fleet of simulated devices with loans, the policy of a
 * lender in Asia/Kolkata, and the engine's clock advanced day by day. Reminders go out on the right days in
 * the lender's zone (at 09:15 IST, inside the quiet hours if read as UTC), locks after the grace period,
 * an unlock on the payment that clears the arrears (the watcher's next poll), a release at the last
 * instalment (automatic, then through the approval queue), nothing for excluded or held devices, nothing
 * while the kill switch is on (and the automated commands still queued cancelled); a run that crashes
 * between two chunks resumes on another instance, and a run replayed from its start sends nothing again.
 * The expectations are checked in the database (actions, commands) and on the devices (what each received).
 */
import { addDays, COLLECTIONS_MESSAGES, lenderClock, loanPosition, type Session } from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CollectionsEngine } from '../src/modules/collections/engine';
import { instalmentsOf } from '../src/modules/loans/repository';
import {
  apiCaller,
  enrol,
  importLoans,
  ist,
  LENDER_ZONE,
  lenderPolicy,
  payAt,
  requestPlan,
  savePolicy,
  setKillSwitch,
  signedIn,
  testEngine,
} from './collections';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';

const DAYS = 30;
const EXCLUDED_RETAILER = '9111111111';

/** The first day of the month after the real today (E's API checks promises against the real today). */
function firstDayOfNextMonth(): string {
  const today = lenderClock(LENDER_ZONE, new Date()).date;
  const [y, m] = today.split('-').map(Number) as [number, number];
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, '0')}-01`;
}

type Expected = [day: number, kind: string][];

describe.each(databaseKinds())('a simulated month of collections on %s', (kind) => {
  const suite = deviceSuite(kind, { collectionsWorkers: false });
  const base = firstDayOfNextMonth();
  const day = (n: number) => addDays(base, n - 1);
  let clock = ist(day(1), '00:00');
  let superadmin: Session;
  let engine: CollectionsEngine;
  let crashAfter: number | null = null;
  /** Turn the kill switch on after this chunk of the day's run. */
  let killAfter: number | null = null;
  const fleet = new Map<string, SimulatedDevice>();
  /** What each device received, per day (command ids de-duplicated: a redelivery is one command). */
  const receivedByDay = new Map<string, Map<number, string[]>>();
  const seen = new Map<string, Set<string>>();

  const api = apiCaller(() => suite.server.app);
  const newEngine = (instanceId: string, leaseMs: number) =>
    testEngine(suite.server.app, {
      now: () => clock,
      chunkSize: 3,
      leaseMs,
      instanceId,
      afterChunk: async (chunk) => {
        if (crashAfter !== null && chunk === crashAfter) {
          crashAfter = null;
          throw new Error('simulated crash after a chunk');
        }
        if (killAfter !== null && chunk === killAfter) {
          killAfter = null;
          const on = await setKillSwitch(suite.server.app, suite.admin.token, true, 'wrong import');
          // The offline device's queued reminders and lock: cancelled.
          expect(on.cancelled).toBe(6);
        }
      },
    });

  const POLICY = lenderPolicy({
    reminders: { preDaysBefore: 3, due: true, postEveryDays: 3 },
    lockAfterDaysOverdue: 5,
    excludedImeis: [],
    excludedRetailers: [EXCLUDED_RETAILER],
  });

  // name → [due days, amount of each]
  const LOANS: Record<string, { due: number[]; amount: string; offline?: boolean; retailer?: string }> = {
    payer: { due: [10, 40], amount: '1500.00' },
    late: { due: [5, 35], amount: '2000.00' },
    last: { due: [8], amount: '500.00' },
    excludedImei: { due: [5, 35], amount: '1000.00' },
    held: { due: [5, 35], amount: '1000.00' },
    excludedRetailer: { due: [5, 35], amount: '1000.00', retailer: EXCLUDED_RETAILER },
    promise: { due: [5, 35], amount: '1000.00' },
    recent: { due: [5, 35], amount: '1000.00' },
    offline: { due: [5, 35], amount: '1000.00', offline: true },
    approval: { due: [20], amount: '700.00' },
    current: { due: [33], amount: '1200.00' },
  };
  const POSTS = [6, 9, 12, 18, 21, 24, 27, 30]; // every 3 days from day 1 overdue; the 15th is a kill-switch day
  /** What each device is sent (or queued), by day: the actions recorded ISSUED or awaiting approval. */
  const EXPECTED: Record<string, Expected> = {
    payer: [[7, 'PRE']],
    late: [
      [2, 'PRE'],
      [5, 'DUE'],
      [6, 'POST'],
      [9, 'POST'],
      [10, 'LOCK'],
      [12, 'POST'],
      [13, 'UNLOCK'],
    ],
    last: [
      [5, 'PRE'],
      [8, 'RELEASE'],
    ],
    excludedImei: [],
    held: [],
    excludedRetailer: [],
    promise: [[2, 'PRE'], [5, 'DUE'], ...POSTS.map((d): [number, string] => [d, 'POST']), [13, 'LOCK']],
    recent: [[2, 'PRE'], [5, 'DUE'], ...POSTS.map((d): [number, string] => [d, 'POST']), [11, 'LOCK']],
    offline: [
      [2, 'PRE'],
      [5, 'DUE'],
      ...POSTS.map((d): [number, string] => [d, 'POST']),
      [10, 'LOCK'],
      [16, 'LOCK'],
    ],
    approval: [
      [17, 'PRE'],
      [20, 'DUE'],
      [20, 'RELEASE'],
    ],
    current: [[30, 'PRE']],
  };
  const COMMAND_OF: Record<string, string> = {
    PRE: 'NOTIFY:Pre',
    DUE: 'NOTIFY:Due',
    POST: 'NOTIFY:Post',
    LOCK: 'LOCK',
    UNLOCK: 'UNLOCK',
    RELEASE: 'RELEASE',
  };
  const imeiOf = (name: string) => (fleet.get(name) as SimulatedDevice).imei;
  const loanRef = (name: string) => `M-${kind}-${name}`;

  beforeAll(async () => {
    superadmin = await signedIn(suite.server.app, suite.database);
    for (const [name, loan] of Object.entries(LOANS)) {
      const device = simulatedDevice(suite.server, {
        profile: loan.retailer ? { retailer_phone: loan.retailer } : {},
      });
      fleet.set(name, await enrol(suite, device, loan.offline));
      receivedByDay.set(name, new Map());
      seen.set(name, new Set());
    }
    await vi.waitFor(async () => {
      const online = await suite.database.db
        .selectFrom('devices')
        .select(sql<number>`count(*)::int`.as('n'))
        .where('online', '=', true)
        .executeTakeFirstOrThrow();
      expect(Number(online.n)).toBe(Object.values(LOANS).filter((l) => !l.offline).length);
    });
    await importLoans(
      suite.server.app,
      suite.admin.token,
      Object.entries(LOANS).map(([name, loan]) => ({
        loanRef: loanRef(name),
        imei: imeiOf(name),
        customerName: `Customer ${name}`,
        currency: 'INR',
        instalments: loan.due.map((n) => ({ dueDate: day(n), amount: loan.amount })),
      })),
    );
    engine = newEngine('instance-a', 400);
  });

  /** A payment through the loans API, paid and received at the engine's clock. */
  const pay = async (name: string, amount: string) => {
    const paymentRef = `P-${kind}-${name}-${clock.getTime()}`;
    await payAt(
      suite.server.app,
      suite.admin.token,
      { paymentRef, loanRef: loanRef(name), amount },
      clock,
      true,
    );
    return paymentRef;
  };

  /** Every automated command of the online devices acknowledged. */
  const delivered = async () => {
    const online = [...fleet].filter(([name]) => !LOANS[name]?.offline).map(([, d]) => d.imei);
    await vi.waitFor(
      async () => {
        const pending = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands
          WHERE interface = 'C' AND imei1 = ANY(${online}::text[]) AND status IN ('QUEUED', 'SENT', 'DELIVERED')`.execute(
          suite.database.db,
        );
        expect(Number(pending.rows[0]?.n)).toBe(0);
      },
      { timeout: 20_000, interval: 50 },
    );
  };

  const snapshot = (n: number) => {
    for (const [name, device] of fleet) {
      const ids = seen.get(name) as Set<string>;
      const today: string[] = [];
      for (const message of device.received) {
        if (ids.has(message.id)) continue;
        ids.add(message.id);
        today.push(message.command === 'NOTIFY' ? `NOTIFY:${message.options.caseType}` : message.command);
      }
      if (today.length > 0) receivedByDay.get(name)?.set(n, today);
    }
  };

  const runDay = async (n: number) => {
    clock = ist(day(n), '09:15');
    const outcome = await engine.runDaily();
    expect(outcome.state, `day ${n}`).toBe('DONE');
  };

  it('runs the month', async () => {
    const { db } = suite.database;
    for (let n = 1; n <= DAYS; n++) {
      // ---- Before the day's run ----
      if (n === 1) {
        await savePolicy(suite.server.app, superadmin.token, {
          ...POLICY,
          excludedImeis: [(fleet.get('excludedImei') as SimulatedDevice).profile.imei2 as string],
        });
        const held = await api(suite.admin.token, 'PUT', `/api/v2/collections/holds/${imeiOf('held')}`, {
          reason: 'customer dispute',
        });
        expect(held.statusCode).toBe(200);
      }
      if (n === 6) {
        const promised = await api(suite.admin.token, 'POST', '/api/v2/loans/promise', {
          loanRef: loanRef('promise'),
          until: day(12),
          timeZone: LENDER_ZONE,
        });
        expect(promised.statusCode, promised.body).toBe(200);
      }
      if (n === 8) {
        // The last instalment paid before the day's run: released at once, quiet hours or not.
        clock = ist(day(8), '08:00');
        await pay('last', '500.00');
        clock = new Date(clock.getTime() + 2_000);
        expect(await engine.watchPayments()).toBe(1);
        await delivered();
      }
      if (n === 10) {
        // 07:30 IST (02:00 UTC): quiet in the lender's zone: no run yet.
        clock = ist(day(10), '07:30');
        expect((await engine.runDaily()).state).toBe('NOT_DUE');
        expect(
          await db.selectFrom('collection_runs').select('id').where('run_date', '=', day(10)).execute(),
        ).toEqual([]);
      }
      if (n === 16) {
        clock = ist(day(16), '08:00');
        await setKillSwitch(suite.server.app, superadmin.token, false, 'import fixed');
      }
      if (n === 19) {
        const saved = await savePolicy(suite.server.app, superadmin.token, {
          ...POLICY,
          release: 'APPROVAL',
          excludedImeis: [(fleet.get('excludedImei') as SimulatedDevice).profile.imei2 as string],
        });
        expect(saved.version).toBe(2);
      }

      // ---- The day's run ----
      if (n === 14) {
        // The kill switch turned on during the run, after its first chunk: the run stops at the next one.
        killAfter = 1;
        clock = ist(day(14), '09:15');
        expect((await engine.runDaily()).state).toBe('STOPPED');
        const stopped = await db
          .selectFrom('collection_runs')
          .select(['state', 'note', 'processed'])
          .where('run_date', '=', day(14))
          .executeTakeFirstOrThrow();
        expect(stopped).toMatchObject({ state: 'STOPPED', note: 'stopped by the kill switch', processed: 3 });
        expect((await engine.runDaily()).state).toBe('NOT_DUE');
      }
      if (n === 14 || n === 15) {
        clock = ist(day(n), '09:15');
        expect((await engine.runDaily()).state).toBe('NOT_DUE');
        const plan = await requestPlan(suite.server.app, suite.admin.token, { date: day(n) });
        expect(plan.killSwitch).toBe(true);
        expect(plan.counts.PRE + plan.counts.DUE + plan.counts.POST + plan.counts.LOCK).toBe(0);
      } else if (n === 6) {
        // A crash after the second chunk; another instance takes over once the lease expires.
        crashAfter = 2;
        clock = ist(day(6), '09:15');
        await expect(engine.runDaily()).rejects.toThrow('simulated crash');
        const crashed = await db
          .selectFrom('collection_runs')
          .select(['state', 'lease_owner', 'cursor', 'processed'])
          .where('run_date', '=', day(6))
          .executeTakeFirstOrThrow();
        expect(crashed).toMatchObject({ state: 'RUNNING', lease_owner: 'instance-a', processed: 6 });
        const other = newEngine('instance-b', 400);
        expect((await other.runDaily()).state).toBe('BUSY');
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect((await other.runDaily()).state).toBe('DONE');
        const resumed = await db
          .selectFrom('collection_runs')
          .select(['state', 'resumes', 'processed'])
          .where('run_date', '=', day(6))
          .executeTakeFirstOrThrow();
        expect(resumed).toMatchObject({ state: 'DONE', resumes: 1, processed: Object.keys(LOANS).length });
        await delivered();
        // Replayed from its start (as if every chunk's cursor were lost): nothing is sent again.
        const commandsBefore = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(db);
        await sql`UPDATE collection_runs SET state = 'RUNNING', cursor = 0, lease_owner = NULL
          WHERE run_date = ${day(6)}::date`.execute(db);
        expect((await other.runDaily()).state).toBe('DONE');
        const commandsAfter = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(db);
        expect(Number(commandsAfter.rows[0]?.n)).toBe(Number(commandsBefore.rows[0]?.n));
      } else {
        await runDay(n);
        // A second look the same day finds the run done.
        expect((await engine.runDaily()).state).toBe('NOT_DUE');
      }
      await delivered();

      if (n === 12) {
        // The plan reads days overdue as the contract's loanPosition does, loan by loan.
        const plan = await requestPlan(suite.server.app, suite.admin.token, { date: day(12), limit: 1000 });
        expect(plan.items.length).toBeGreaterThan(5);
        for (const item of plan.items as { loanId: number; daysOverdue: number }[]) {
          const position = loanPosition(await instalmentsOf(db, item.loanId), day(12));
          expect(item.daysOverdue).toBe(position.daysOverdue);
        }
      }

      // ---- After the run: payments, and the watcher's next poll ----
      if (n === 9) {
        clock = ist(day(9), '15:00');
        await pay('payer', '1500.00');
        clock = ist(day(9), '18:00');
        // A quarter of the ₹1,000 overdue: the policy's default minimum, so it suspends tomorrow's lock.
        await pay('recent', '250.00');
        clock = new Date(clock.getTime() + 2_000);
        expect(await engine.watchPayments()).toBe(0); // neither device is locked
      }
      if (n === 13) {
        clock = ist(day(13), '15:00');
        await pay('late', '2000.00');
        clock = new Date(clock.getTime() + 2_000);
        expect(await engine.watchPayments()).toBe(1);
        await vi.waitFor(() => expect((fleet.get('late') as SimulatedDevice).state.locked).toBe(false));
        const unlock = await db
          .selectFrom('collection_actions')
          .select(['state', 'trigger_payment_id'])
          .where('imei1', '=', imeiOf('late'))
          .where('kind', '=', 'UNLOCK')
          .executeTakeFirstOrThrow();
        expect(unlock.state).toBe('ISSUED');
        expect(Number(unlock.trigger_payment_id)).toBeGreaterThan(0);
      }
      if (n === 20) {
        clock = ist(day(20), '11:00');
        await pay('approval', '700.00');
        clock = new Date(clock.getTime() + 2_000);
        expect(await engine.watchPayments()).toBe(0); // queued for approval, not sent
        const queue = (await api(suite.admin.token, 'GET', '/api/v2/collections/releases')).json().items;
        expect(queue).toHaveLength(1);
        expect(queue[0]).toMatchObject({ imei: imeiOf('approval'), state: 'AWAITING_APPROVAL' });
        const approved = await api(
          suite.admin.token,
          'POST',
          `/api/v2/collections/releases/${queue[0].id}/approve`,
          {},
        );
        expect(approved.statusCode, approved.body).toBe(200);
        expect(approved.json()).toMatchObject({
          message: COLLECTIONS_MESSAGES.releaseApproved,
          release: { state: 'APPROVED', transactionId: expect.any(String) },
        });
        const again = await api(
          suite.admin.token,
          'POST',
          `/api/v2/collections/releases/${queue[0].id}/approve`,
          {},
        );
        expect(again.statusCode).toBe(409);
        expect(again.json().message).toBe(COLLECTIONS_MESSAGES.releaseDecided);
      }
      await delivered();
      snapshot(n);
    }

    // ---- What was recorded, device by device ----
    const actions = await sql<{
      imei1: string;
      kind: string;
      state: string;
      skip_reason: string | null;
      day: string;
    }>`
      SELECT imei1, kind, state, skip_reason, action_date::text AS day FROM collection_actions
      ORDER BY action_date, kind`.execute(db);
    const dayNumber = (d: string) => Math.round((Date.parse(d) - Date.parse(base)) / 86_400_000) + 1;
    const sorted = (list: Expected) => [...list].sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
    for (const [name, expected] of Object.entries(EXPECTED)) {
      const taken = actions.rows
        .filter((a) => a.imei1 === imeiOf(name) && a.state !== 'SKIPPED')
        .map((a): [number, string] => [dayNumber(a.day), a.kind]);
      expect(sorted(taken), name).toEqual(sorted(expected));
    }
    // At most one reminder, one lock, one unlock per device and day (the table's unique key, and the rows).
    const perDay = new Map<string, number>();
    for (const a of actions.rows) {
      const group = ['PRE', 'DUE', 'POST'].includes(a.kind) ? 'REMIND' : a.kind;
      const key = `${a.imei1}|${a.day}|${group}`;
      perDay.set(key, (perDay.get(key) ?? 0) + 1);
    }
    expect([...perDay.values()].every((count) => count === 1)).toBe(true);
    // Nothing at all while the kill switch was on.
    expect(actions.rows.filter((a) => a.day === day(14) || a.day === day(15))).toEqual([]);
    // Why nothing went to some: recorded.
    const skips = (name: string) =>
      actions.rows
        .filter((a) => a.imei1 === imeiOf(name) && a.state === 'SKIPPED')
        .map((a) => `${dayNumber(a.day)}:${a.kind}:${a.skip_reason}`);
    expect(new Set(actions.rows.filter((a) => a.imei1 === imeiOf('held')).map((a) => a.skip_reason))).toEqual(
      new Set(['held']),
    );
    expect(
      new Set(actions.rows.filter((a) => a.imei1 === imeiOf('excludedImei')).map((a) => a.skip_reason)),
    ).toEqual(new Set(['excluded']));
    expect(
      new Set(actions.rows.filter((a) => a.imei1 === imeiOf('excludedRetailer')).map((a) => a.skip_reason)),
    ).toEqual(new Set(['excluded']));
    expect(skips('promise').filter((s) => s.includes('promiseToPay'))).toEqual([
      '10:LOCK:promiseToPay',
      '11:LOCK:promiseToPay',
      '12:LOCK:promiseToPay',
    ]);
    expect(skips('recent').filter((s) => s.includes('recentPayment'))).toEqual(['10:LOCK:recentPayment']);

    // ---- What the devices received, day by day: each exactly what was recorded for it, once ----
    for (const [name, expected] of Object.entries(EXPECTED)) {
      if (LOANS[name]?.offline) continue;
      const byDay = receivedByDay.get(name) as Map<number, string[]>;
      const got = [...byDay].flatMap(([n, commands]) => commands.map((c): [number, string] => [n, c]));
      const want = expected.map(([n, k]): [number, string] => [n, COMMAND_OF[k] as string]);
      expect(sorted(got), name).toEqual(sorted(want));
    }
    for (const name of ['excludedImei', 'held', 'excludedRetailer'])
      expect((fleet.get(name) as SimulatedDevice).received, name).toEqual([]);
    expect((fleet.get('last') as SimulatedDevice).state.released).toBe(true);
    expect((fleet.get('approval') as SimulatedDevice).state.released).toBe(true);
    expect((fleet.get('promise') as SimulatedDevice).state.locked).toBe(true);

    // The offline device's commands queued before the kill switch were cancelled, with why.
    const cancelled = await db
      .selectFrom('commands')
      .select(['command', 'result'])
      .where('imei1', '=', imeiOf('offline'))
      .where('status', '=', 'CANCELLED')
      .execute();
    expect(cancelled).toHaveLength(6);
    expect(cancelled.every((c) => c.result === COLLECTIONS_MESSAGES.stopped)).toBe(true);

    // ---- Reports show the rule as the automated command's user, with interface C ----
    const audit = await api(suite.admin.token, 'POST', '/api/auditReportByImei.php', {
      imei1: imeiOf('late'),
    });
    const rows = audit.json().commands as { interface: string; command: string; user: string }[];
    expect(rows.find((r) => r.command === 'LOCK')).toMatchObject({
      interface: 'C',
      user: 'collections v1: lock after 5 days overdue',
    });
    expect(rows.find((r) => r.command === 'UNLOCK')).toMatchObject({
      interface: 'C',
      user: 'collections v1: unlock when a payment clears the arrears',
    });

    // ---- The runs: one per day but the 15th (kill switch on all day), each done but the 14th's ----
    const runs = (await api(suite.admin.token, 'GET', '/api/v2/collections/runs')).json().items as {
      runDate: string;
      state: string;
    }[];
    expect(runs).toHaveLength(DAYS - 1);
    expect(runs.filter((r) => r.state !== 'DONE').map((r) => [r.runDate, r.state])).toEqual([
      [day(14), 'STOPPED'],
    ]);
  });
});
