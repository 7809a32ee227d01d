/**
 * Collections on autopilot, the API (docs/features.md § Collections on autopilot): who may change the policy
 * (a SUPERADMIN; an ADMIN is refused with a clear message and nothing changes), its versions and audit rows,
 * the kill switch (stopping is anyone's, resuming a SUPERADMIN's; a retailer's user neither), holds and the
 * plan scoped to a retailer's devices, and bad input answered 400 with nothing changed.
 */
import {
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  MESSAGES,
  type Session,
} from '@lendlock/contract';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import { apiCaller, collectionsAppSuite, importLoans, savePolicy, signedIn, testEngine } from './collections';
import { databaseKinds, fingerprint } from './db';
import { registerProfile } from './devices';
import { buildKey } from './factories';

const TABLES = ['collection_policies', 'collection_control', 'collection_holds', 'collection_actions'];

const POLICY: CollectionsPolicy = {
  ...DEFAULT_COLLECTIONS_POLICY,
  enabled: true,
  timeZone: 'Asia/Kolkata',
  reminders: { preDaysBefore: 3, due: true, postEveryDays: 3 },
  lockAfterDaysOverdue: 5,
};

describe.each(databaseKinds())('collections API on %s', (kind) => {
  const suite = collectionsAppSuite(kind);
  let retailerAdmin: Session;
  let user: Session;
  let adminKey: string;
  const RETAILER = '9000000001';
  const OTHER_RETAILER = '9000000002';
  let ownDevice: string;
  let otherDevice: string;

  const call = apiCaller(() => suite.app, '/api/v2/collections/');
  const auditRows = async (action: string) =>
    suite.database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'details'])
      .where('action', '=', action)
      .orderBy('id')
      .execute();

  beforeAll(async () => {
    const { app, database } = suite;
    retailerAdmin = await signedIn(app, database, { userlevel: 'ADMIN', retailerPhone: RETAILER });
    user = await signedIn(app, database, { userlevel: 'USER', permissions: ['deviceDetails', 'reports'] });
    adminKey = (await buildKey(app, database)).key;
    ownDevice = (await registerProfile(app, { retailer_phone: RETAILER })).profile.imei1;
    otherDevice = (await registerProfile(app, { retailer_phone: OTHER_RETAILER })).profile.imei1;
    await importLoans(
      app,
      suite.admin.token,
      [ownDevice, otherDevice].map((imei, i) => ({
        loanRef: `API-${kind}-${i}`,
        imei,
        customerName: `Customer ${i}`,
        currency: 'INR',
        instalments: [
          { dueDate: '2026-03-01', amount: '1000.00' },
          { dueDate: '2026-04-01', amount: '1000.00' },
        ],
      })),
    );
  });

  it('answers version 0 (the default, off) before any policy is saved', async () => {
    const response = await call(suite.admin.token, 'GET', 'policy');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toMatchObject({
      version: 0,
      policy: DEFAULT_COLLECTIONS_POLICY,
      changedBy: null,
    });
    expect(DEFAULT_COLLECTIONS_POLICY.enabled).toBe(false);
  });

  it('refuses the policy to an ADMIN (and a key of one) with a clear message, changing nothing', async () => {
    const before = await fingerprint(suite.database.db, TABLES);
    for (const [token, message] of [
      [suite.admin.token, COLLECTIONS_MESSAGES.superadminOnly],
      [adminKey, COLLECTIONS_MESSAGES.superadminOnly],
      // The policy governs every retailer's loans: a retailer's user changes it at no level.
      [retailerAdmin.token, COLLECTIONS_MESSAGES.policyRetailer],
    ] as const) {
      const response = await call(token, 'PUT', 'policy', { policy: POLICY });
      expect(response.statusCode).toBe(403);
      expect(response.json().message).toBe(message);
    }
    const refusedByUser = await call(user.token, 'PUT', 'policy', { policy: POLICY });
    expect(refusedByUser.statusCode).toBe(403);
    expect(await fingerprint(suite.database.db, TABLES)).toBe(before);
    expect((await auditRows('collections.policy')).map((r) => r.result)).toEqual([
      'REFUSED',
      'REFUSED',
      'REFUSED',
    ]);
  });

  it('refuses a bad policy with the field’s message, changing nothing', async () => {
    const before = await fingerprint(suite.database.db, TABLES);
    const cases: [unknown, string][] = [
      [{ ...POLICY, timeZone: 'Mars/Olympus' }, COLLECTIONS_MESSAGES.badTimeZone],
      [{ ...POLICY, quietHours: { start: '25:00', end: '08:00' } }, COLLECTIONS_MESSAGES.badTime],
      [{ ...POLICY, quietHours: { start: '08:00', end: '08:00' } }, COLLECTIONS_MESSAGES.quietHoursEmpty],
      [{ ...POLICY, excludedImeis: ['123'] }, COLLECTIONS_MESSAGES.badImei],
      [{ ...POLICY, excludedRetailers: ['abc'] }, COLLECTIONS_MESSAGES.badRetailer],
    ];
    for (const [policy, message] of cases) {
      const response = await call(suite.superadmin.token, 'PUT', 'policy', { policy });
      expect(response.statusCode, JSON.stringify(policy)).toBe(400);
      expect(response.json().message).toContain(message);
    }
    const lockZero = await call(suite.superadmin.token, 'PUT', 'policy', {
      policy: { ...POLICY, lockAfterDaysOverdue: 0 },
    });
    expect(lockZero.statusCode).toBe(400);
    expect(await fingerprint(suite.database.db, TABLES)).toBe(before);
  });

  it('saves versions for a SUPERADMIN, with who changed what and when, audited', async () => {
    const first = await call(suite.superadmin.token, 'PUT', 'policy', { policy: POLICY });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({
      message: COLLECTIONS_MESSAGES.policySaved(1),
      version: 1,
      policy: POLICY,
    });
    const same = await call(suite.superadmin.token, 'PUT', 'policy', { policy: POLICY });
    expect(same.json()).toMatchObject({ message: COLLECTIONS_MESSAGES.policyUnchanged, version: 1 });
    const second = await call(suite.superadmin.token, 'PUT', 'policy', {
      policy: { ...POLICY, lockAfterDaysOverdue: 7, excludedImeis: [otherDevice] },
    });
    expect(second.json()).toMatchObject({ message: COLLECTIONS_MESSAGES.policySaved(2), version: 2 });

    const versions = (await call(suite.admin.token, 'GET', 'policy/versions')).json().items;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([2, 1]);
    expect(versions[0].changes).toEqual([
      { field: 'lockAfterDaysOverdue', from: 5, to: 7 },
      { field: 'excludedImeis', from: [], to: [otherDevice] },
    ]);
    expect(versions[0].changedBy).toMatch(/@lendlock\.com$/);
    const rows = await suite.database.db
      .selectFrom('collection_policies')
      .select(['version', 'created_by'])
      .orderBy('version')
      .execute();
    expect(rows.map((r) => r.version)).toEqual([1, 2]);
    const audit = (await auditRows('collections.policy')).filter((r) => r.result !== 'REFUSED');
    expect(audit.map((r) => r.result)).toEqual(['v1', 'v2']);
    expect((audit[1]?.details as { changes?: unknown[] } | undefined)?.changes).toHaveLength(2);
    expect((await call(suite.admin.token, 'GET', 'policy')).json()).toMatchObject({ version: 2 });
  });

  it('plans a day: counts per action and the IMEIs, scoped to a retailer’s devices, paged', async () => {
    const all = await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-08' });
    expect(all.statusCode, all.body).toBe(200);
    const body = all.json();
    expect(body).toMatchObject({
      date: '2026-03-08',
      timeZone: 'Asia/Kolkata',
      version: 2,
      killSwitch: false,
    });
    // Both loans 7 days overdue: a LOCK (v2: after 7 days) for ours, the other device is excluded.
    expect(body.counts.LOCK).toBe(1);
    expect(body.counts.skipped.excluded).toBe(2);
    const lock = body.items.find((i: { action: string }) => i.action === 'LOCK');
    expect(lock).toMatchObject({
      imei: ownDevice,
      rule: 'collections v2: lock after 7 days overdue',
      daysOverdue: 7,
      amount: '1000.00',
      skipped: null,
      done: false,
    });
    const scoped = (await call(retailerAdmin.token, 'POST', 'plan', { date: '2026-03-08' })).json();
    expect(scoped.items.every((i: { imei: string }) => i.imei === ownDevice)).toBe(true);
    expect(scoped.counts.skipped.excluded).toBe(0);

    const first = (await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-08', limit: 1 })).json();
    expect(first.items).toHaveLength(1);
    expect(first.cursor).not.toBeNull();
    const rest = (
      await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-08', limit: 100, cursor: first.cursor })
    ).json();
    expect([...first.items, ...rest.items]).toEqual(body.items);
    const bad = await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-08', cursor: 'x' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toBe(COLLECTIONS_MESSAGES.badCursor);
    const badDate = await call(suite.admin.token, 'POST', 'plan', { date: '2026-02-30' });
    expect(badDate.statusCode).toBe(400);

    // A dry run of an unsaved policy: nothing excluded, locks after 5 days.
    const draft = (
      await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-06', policy: POLICY })
    ).json();
    expect(draft.version).toBeNull();
    expect(draft.counts.LOCK).toBe(2);
    expect(draft.items[0].rule).toBe('collections draft: lock after 5 days overdue');
  });

  it('downloads the whole plan as CSV with the BOM', async () => {
    const response = await call(suite.admin.token, 'POST', 'plan/export', {
      date: '2026-03-06',
      policy: POLICY,
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-disposition']).toContain('collections-plan_2026-03-06.csv');
    const text = response.body;
    expect(text.startsWith('\uFEFFIMEI,Loan,Customer')).toBe(true);
    const lines = text.slice(1).split('\r\n');
    // Day 5 overdue: a LOCK for each loan (no reminder falls on that day).
    expect(lines).toHaveLength(1 + 2);
    expect(lines.filter((l) => l.includes(',LOCK,'))).toHaveLength(2);
  });

  it('holds a device for an ADMIN or its retailer’s ADMIN; another retailer’s is not found', async () => {
    const refused = await call(retailerAdmin.token, 'PUT', `holds/${otherDevice}`, { reason: 'dispute' });
    expect(refused.statusCode).toBe(404);
    expect(refused.json().message).toBe(COLLECTIONS_MESSAGES.deviceNotFound);
    const empty = await call(suite.admin.token, 'PUT', `holds/${ownDevice}`, { reason: '  ' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().message).toContain(COLLECTIONS_MESSAGES.reasonRequired);
    expect(await suite.database.db.selectFrom('collection_holds').selectAll().execute()).toEqual([]);

    const held = await call(retailerAdmin.token, 'PUT', `holds/${ownDevice}`, { reason: 'customer dispute' });
    expect(held.statusCode, held.body).toBe(200);
    expect(held.json()).toMatchObject({ message: COLLECTIONS_MESSAGES.holdSet, hold: { imei: ownDevice } });
    expect((await call(suite.admin.token, 'GET', `holds?imei=${ownDevice}`)).json().items).toHaveLength(1);
    expect((await call(suite.admin.token, 'GET', `holds?imei=${otherDevice}`)).json().items).toHaveLength(0);
    const plan = (
      await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-06', policy: POLICY })
    ).json();
    expect(
      plan.items
        .filter((i: { imei: string }) => i.imei === ownDevice)
        .map((i: { skipped: string }) => i.skipped),
    ).toEqual(['held']);

    expect((await call(suite.admin.token, 'DELETE', `holds/${ownDevice}`)).json().message).toBe(
      COLLECTIONS_MESSAGES.holdRemoved,
    );
    const again = await call(suite.admin.token, 'DELETE', `holds/${ownDevice}`);
    expect(again.statusCode).toBe(404);
    expect(again.json().message).toBe(COLLECTIONS_MESSAGES.holdNotFound);
    expect((await auditRows('collections.hold')).map((r) => r.result)).toEqual(['HELD', 'RELEASED']);
  });

  it('kill switch: an ADMIN stops, only a SUPERADMIN resumes, a retailer’s user does neither', async () => {
    const before = await fingerprint(suite.database.db, TABLES);
    const retailer = await call(retailerAdmin.token, 'PUT', 'kill-switch', { on: true, reason: 'fraud' });
    expect(retailer.statusCode).toBe(403);
    expect(retailer.json().message).toBe(COLLECTIONS_MESSAGES.killSwitchRetailer);
    const byUser = await call(user.token, 'PUT', 'kill-switch', { on: true, reason: 'fraud' });
    expect(byUser.statusCode).toBe(403);
    expect(byUser.json().message).toBe(MESSAGES.unauthorised);
    expect(await fingerprint(suite.database.db, TABLES)).toBe(before);

    const on = await call(suite.admin.token, 'PUT', 'kill-switch', { on: true, reason: 'bad import' });
    expect(on.statusCode, on.body).toBe(200);
    expect(on.json()).toMatchObject({
      on: true,
      reason: 'bad import',
      message: COLLECTIONS_MESSAGES.killSwitchOn,
    });
    const plan = (await call(suite.admin.token, 'POST', 'plan', { date: '2026-03-08' })).json();
    expect(plan.killSwitch).toBe(true);
    expect(plan.counts.LOCK + plan.counts.POST).toBe(0);
    expect(plan.counts.skipped.killSwitch).toBeGreaterThan(0);

    const off = await call(suite.admin.token, 'PUT', 'kill-switch', { on: false, reason: 'fixed' });
    expect(off.statusCode).toBe(403);
    expect(off.json().message).toBe(COLLECTIONS_MESSAGES.killSwitchOffSuperadmin);
    expect((await call(suite.admin.token, 'GET', 'kill-switch')).json()).toMatchObject({ on: true });
    const twice = await call(suite.admin.token, 'PUT', 'kill-switch', { on: true, reason: 'again' });
    expect(twice.statusCode).toBe(409);
    const resumed = await call(suite.superadmin.token, 'PUT', 'kill-switch', { on: false, reason: 'fixed' });
    expect(resumed.json()).toMatchObject({ on: false, message: COLLECTIONS_MESSAGES.killSwitchOff });
    expect((await auditRows('collections.killswitch')).map((r) => r.result)).toEqual([
      'REFUSED',
      'ON',
      'REFUSED',
      'OFF',
    ]);
  });

  it('queues a release for approval: another retailer’s user cannot see or approve it; a reject sends nothing', async () => {
    const saved = await savePolicy(suite.app, suite.superadmin.token, { ...POLICY, release: 'APPROVAL' });
    expect(saved.version).toBe(3);
    const paid = await suite.app.inject({
      method: 'POST',
      url: '/api/v2/payments',
      headers: { 'x-api-key': suite.admin.token },
      payload: {
        paymentRef: `PAY-${kind}-1`,
        loanRef: `API-${kind}-1`,
        amount: '2000.00',
        paidAt: new Date().toISOString(),
      },
    });
    expect(paid.statusCode, paid.body).toBe(200);
    const engine = testEngine(suite.app, { oneShotTtlMs: 3_600_000 });
    expect(await engine.watchPayments()).toBe(0); // queued, not sent
    const queue = (await call(suite.admin.token, 'GET', 'releases')).json().items;
    expect(queue).toHaveLength(1);
    expect(queue[0]).toMatchObject({
      imei: otherDevice,
      state: 'AWAITING_APPROVAL',
      retailerPhone: OTHER_RETAILER,
    });
    const id = queue[0].id as number;

    expect((await call(retailerAdmin.token, 'GET', 'releases')).json().items).toEqual([]);
    const before = await fingerprint(suite.database.db, [...TABLES, 'commands']);
    const foreign = await call(retailerAdmin.token, 'POST', `releases/${id}/approve`, {});
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe(COLLECTIONS_MESSAGES.releaseNotFound);
    expect(await fingerprint(suite.database.db, [...TABLES, 'commands'])).toBe(before);

    const rejected = await call(suite.admin.token, 'POST', `releases/${id}/reject`, {
      reason: 'device to be returned',
    });
    expect(rejected.statusCode, rejected.body).toBe(200);
    expect(rejected.json()).toMatchObject({
      message: COLLECTIONS_MESSAGES.releaseRejected,
      release: { state: 'REJECTED', transactionId: null },
    });
    const approveAfter = await call(suite.admin.token, 'POST', `releases/${id}/approve`, {});
    expect(approveAfter.statusCode).toBe(409);
    expect(approveAfter.json().message).toBe(COLLECTIONS_MESSAGES.releaseDecided);
    expect((await call(suite.admin.token, 'GET', 'releases')).json().items).toEqual([]);
    expect((await call(suite.admin.token, 'GET', 'releases?state=REJECTED')).json().items).toHaveLength(1);
    const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(
      suite.database.db,
    );
    expect(Number(count.rows[0]?.n)).toBe(0);
    expect((await auditRows('collections.release.reject')).map((r) => r.result)).toEqual(['REJECTED']);
    // A release is queued once: the payment seen again queues nothing more.
    expect(await engine.watchPayments()).toBe(0);
    expect((await call(suite.admin.token, 'GET', 'releases?state=REJECTED')).json().items).toHaveLength(1);
  });

  it('answers the runs, none yet; an unknown release is not found', async () => {
    expect((await call(suite.admin.token, 'GET', 'runs')).json().items).toEqual([]);
    const unknown = await call(suite.admin.token, 'POST', 'releases/999/approve', {});
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe(COLLECTIONS_MESSAGES.releaseNotFound);
    const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(
      suite.database.db,
    );
    expect(Number(count.rows[0]?.n)).toBe(0);
  });
});
