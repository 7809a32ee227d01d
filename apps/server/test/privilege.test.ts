/**
 * Privilege and secrets: no answer anywhere carries a password hash, key hash, reset token or device
 * credential; a retailer user cannot reach another retailer's device; keys are rate-limited without
 * dropping an accepted command; two racing commands on one IMEI end in one well-defined state.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Session } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ROUTE_POLICIES } from '../src/authz/policies';
import { sha256Hex } from '../src/lib/secrets';
import { FINANCED_MESSAGES } from '../src/modules/devices/financed';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import {
  type DeviceServer,
  type randomProfile,
  registerProfile,
  startDeviceServer,
  TEST_ENROLLMENT_SECRET,
} from './devices';
import { buildKey, buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

describe.each(databaseKinds())('privilege and secrets on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let superadmin: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded', { keyRateLimitPerMinute: 20 });
    superadmin = await loginAs(server.app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    server.app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
  const register = async (overrides: Parameters<typeof randomProfile>[0] = {}) => {
    const { profile, credential } = await registerProfile(server.app, overrides);
    return { imei: profile.imei1, credential };
  };

  it('never answers with a password hash, key hash, reset token or device credential', async () => {
    const device = await register();
    const { key } = await buildKey(server.app, database, { userlevel: 'SUPERADMIN' }, 'leak check');
    await call(key, 'POST', '/api/locknotification.php', { imei: device.imei, action: 'lock' });
    const user = await buildUser(database);
    await server.app.inject({
      method: 'POST',
      url: '/api/forgotPassword.php',
      payload: { email: user.email },
    });
    const secrets = [
      ...(await database.db.selectFrom('users').select('password_hash').execute()).map(
        (r) => r.password_hash,
      ),
      ...(await database.db.selectFrom('api_keys').select('key_hash').execute()).map((r) => r.key_hash),
      ...(await database.db.selectFrom('password_resets').select('token_hash').execute()).map(
        (r) => r.token_hash,
      ),
      ...(await database.db.selectFrom('devices').select('credential_hash').execute()).flatMap((r) =>
        r.credential_hash ? [r.credential_hash] : [],
      ),
      device.credential,
      key,
      sha256Hex(key),
      TEST_ENROLLMENT_SECRET,
    ];
    const day = new Date().toISOString().slice(0, 10);
    const responses = await Promise.all([
      call(superadmin.token, 'GET', '/api/getUsers.php'),
      call(superadmin.token, 'GET', '/keyapi/keymanagement/view_keys.php'),
      call(superadmin.token, 'POST', '/api/devicedetails.php', { imei: device.imei }),
      call(superadmin.token, 'POST', '/api/auditReportByImei.php', { imei1: device.imei }),
      call(superadmin.token, 'POST', '/api/v2/audit/search', {}),
      call(superadmin.token, 'GET', `/api/v2/audit/export?from=${day}&to=${day}`),
      call(superadmin.token, 'POST', '/api/downloadReports.php', {
        report: 'registration',
        startdate: day,
        enddate: day,
        match: 'ALL',
      }),
      call(
        superadmin.token,
        'GET',
        `/api/v2/reports/export?report=registration&startdate=${day}&enddate=${day}&match=ALL`,
      ),
      call(superadmin.token, 'POST', '/api/addUser.php', {
        email: user.email,
        phone: '9000000000',
        password: 'whatever-1',
        permissions: [],
      }),
      call(superadmin.token, 'POST', '/api/v2/pendingCommands', { imei: device.imei }),
      server.app.inject('/config.json'),
    ]);
    for (const response of responses) {
      const body = response.rawPayload.toString('latin1');
      for (const secret of secrets)
        expect(body.includes(secret), `${response.raw.req.url} leaks a secret`).toBe(false);
      expect(body).not.toMatch(/\$argon2id\$/);
    }
  });

  it("keeps a retailer user off another retailer's device, changing nothing", async () => {
    const theirs = await register({ retailer_phone: '9333333333' });
    const retailer = await loginAs(
      server.app,
      await buildUser(database, {
        retailerPhone: '9444444444',
        permissions: ['lockDevice', 'deviceDetails', 'auditReport'],
      }),
    );
    const before = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM commands WHERE imei1 = ${theirs.imei}`.execute(database.db);
    expect(
      (await call(retailer.token, 'POST', '/api/locknotification.php', { imei: theirs.imei, action: 'lock' }))
        .statusCode,
    ).toBe(404);
    expect(
      (await call(retailer.token, 'POST', '/api/devicedetails.php', { imei: theirs.imei })).json().items,
    ).toEqual([]);
    const audit = (
      await call(retailer.token, 'POST', '/api/auditReportByImei.php', { imei1: theirs.imei })
    ).json();
    expect(audit.registration).toEqual([]);
    expect(
      (await call(retailer.token, 'POST', '/api/v2/pendingCommands', { imei: theirs.imei })).json().items,
    ).toEqual([]);
    const after = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM commands WHERE imei1 = ${theirs.imei}`.execute(database.db);
    expect(after.rows[0]?.n).toBe(before.rows[0]?.n);
  });

  it('rate-limits an integrator key with 429 and Retry-After; every accepted command is stored', async () => {
    const device = await register();
    const { key, session: admin } = await buildKey(server.app, database, { userlevel: 'ADMIN' }, 'burst');
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        call(key, 'POST', '/api/locknotification.php', {
          imei: device.imei,
          action: i % 2 ? 'lock' : 'unlock',
        }),
      ),
    );
    const accepted = responses.filter((r) => r.statusCode === 200);
    const limited = responses.filter((r) => r.statusCode === 429);
    expect(accepted.length).toBe(20);
    expect(limited.length).toBe(20);
    expect(Number(limited[0]?.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited[0]?.json()).toMatchObject({ status: 'error', code: 'RATE_LIMITED' });
    const ids = accepted.map((r) => r.json().transactionId as string);
    const stored = await database.db
      .selectFrom('commands')
      .select('transaction_id')
      .where('transaction_id', 'in', ids)
      .execute();
    expect(stored).toHaveLength(ids.length);
    // A console session is not limited by the key's budget.
    expect(
      (await call(admin.token, 'POST', '/api/locknotification.php', { imei: device.imei, action: 'lock' }))
        .statusCode,
    ).toBe(200);
  });

  it('two racing requests on one IMEI (lock and release) end in one well-defined state', async () => {
    for (let round = 0; round < 5; round++) {
      const device = await register();
      const [lock, release] = await Promise.all([
        call(superadmin.token, 'POST', '/api/locknotification.php', { imei: device.imei, action: 'lock' }),
        call(superadmin.token, 'POST', '/api/locknotification.php', { imei: device.imei, action: 'release' }),
      ]);
      expect(release.statusCode).toBe(200);
      const row = await database.db
        .selectFrom('devices')
        .select('desired_state')
        .where('imei1', '=', device.imei)
        .executeTakeFirstOrThrow();
      // Whatever the order, the device ends released and unlocked, and nothing after the release is accepted.
      expect(row.desired_state).toMatchObject({ released: true, locked: false });
      if (lock.statusCode !== 200)
        expect(lock.json().message).toBe('This device has been released and accepts no further commands.');
      const queued = await database.db
        .selectFrom('commands')
        .select(['command', 'status'])
        .where('imei1', '=', device.imei)
        .orderBy('id')
        .execute();
      expect(queued.at(-1)?.command).toBe('RELEASE');
    }
  });

  it('refuses the next request of a user disabled meanwhile', async () => {
    const user = await buildUser(database, { permissions: ['deviceDetails'] });
    const session = await loginAs(server.app, user);
    expect((await call(session.token, 'GET', '/api/homeData.php')).statusCode).toBe(200);
    await call(superadmin.token, 'POST', '/api/updateUserStatus.php', {
      email: user.email,
      status: 'INACTIVE',
    });
    expect((await call(session.token, 'GET', '/api/homeData.php')).statusCode).toBe(401);
  });
});

/**
 * Retailer scope on every `/api/v2/` call: a user with a retailer phone, at each level, reaches only
 * the devices that retailer registered (and the data about them). Another retailer's device, command,
 * batch, upload, report row or audit row is not found, or the answer is empty, and nothing changes.
 */
describe.each(databaseKinds())('retailer scope on every /api/v2/ call on %s', (kind) => {
  const OURS = '9444444444';
  const THEIRS = '9333333333';
  let database: TestDatabase;
  let server: DeviceServer;
  let dataDir: string;
  let superadmin: Session;
  /** Retailer OURS at each level; USER with every screen this suite calls. */
  let rUser: Session;
  let rAdmin: Session;
  let rSuper: Session;
  /** A device of each retailer, registered over HTTP (offline: their commands stay QUEUED). */
  let ours: string;
  let theirs: string;
  /** A QUEUED command on their device, a batch of a non-retailer USER, the file it uploaded. */
  let theirCommand: string;
  let theirBatch: number;
  let theirFile: string;
  let theirRequest: number;

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    server.app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
  /** What a call could change: devices, commands, batches, the financed list, requests, uploads. */
  const state = async () => {
    const row = await sql<{ s: string }>`SELECT concat_ws('/',
      (SELECT md5(string_agg(d::text, '|' ORDER BY d.imei1)) FROM devices d),
      (SELECT md5(string_agg(c::text, '|' ORDER BY c.id)) FROM commands c),
      (SELECT md5(string_agg(b::text, '|' ORDER BY b.id)) FROM (SELECT id, status, paused, last_imei, user_id FROM batches) b),
      (SELECT count(*) FROM financed_imeis),
      (SELECT md5(string_agg(r::text, '|' ORDER BY r.id)) FROM reregistration_requests r)) AS s`.execute(
      database.db,
    );
    return row.rows[0]?.s;
  };
  const register = async (retailer: string) => {
    const { profile, statusCode } = await registerProfile(server.app, { retailer_phone: retailer });
    expect(statusCode).toBe(200);
    return profile.imei1;
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'lendlock-scope-'));
    server = await startDeviceServer(database, 'embedded', { dataDir });
    superadmin = await loginAs(server.app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const screens = ['deviceDetails', 'auditReport', 'reports', 'lockDevice'];
    rUser = await loginAs(
      server.app,
      await buildUser(database, { retailerPhone: OURS, permissions: screens }),
    );
    rAdmin = await loginAs(
      server.app,
      await buildUser(database, { retailerPhone: OURS, userlevel: 'ADMIN' }),
    );
    rSuper = await loginAs(
      server.app,
      await buildUser(database, { retailerPhone: OURS, userlevel: 'SUPERADMIN' }),
    );
    ours = await register(OURS);
    theirs = await register(THEIRS);
    await register(THEIRS);
    // A batch on their devices by a USER without a retailer (its rows name their IMEIs).
    const owner = await loginAs(server.app, await buildUser(database, { permissions: ['lockDevice'] }));
    const body = multipart({}, { name: 'theirs.csv', type: 'text/csv', content: imeiCsv([theirs]) });
    const uploaded = await server.app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': owner.token },
      payload: body.payload,
    });
    theirBatch = uploaded.json().batchId;
    await vi.waitFor(
      async () =>
        expect(
          (await call(superadmin.token, 'POST', '/api/v2/batch/progress', { batchId: theirBatch })).json(),
        ).toMatchObject({ batch: { isComplete: 'complete' } }),
      { timeout: 20_000 },
    );
    const batch = await database.db
      .selectFrom('batches')
      .select('stored_file')
      .where('id', '=', theirBatch)
      .executeTakeFirstOrThrow();
    theirFile = batch.stored_file ?? '';
    // After the batch, so that its LOCK does not supersede this one: it stays QUEUED (their device is offline).
    theirCommand = (
      await call(superadmin.token, 'POST', '/api/locknotification.php', { imei: theirs, action: 'lock' })
    ).json().transactionId;
    await call(superadmin.token, 'POST', '/api/locknotification.php', { imei: ours, action: 'lock' });
    // A refused re-registration of their device, waiting for an operator.
    const request = await database.db
      .insertInto('reregistration_requests')
      .values({ imei1: theirs, profile: JSON.stringify({ brand: 'Evil' }), address: '203.0.113.9' })
      .returning('id')
      .executeTakeFirstOrThrow();
    theirRequest = Number(request.id);
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('POST /api/v2/deviceIdentity: their device is not found', async () => {
    const before = await state();
    for (const session of [rUser, rAdmin, rSuper]) {
      const response = await call(session.token, 'POST', '/api/v2/deviceIdentity', { imei: theirs });
      expect([response.statusCode, response.json().message]).toEqual([404, 'No results found']);
    }
    expect((await call(rUser.token, 'POST', '/api/v2/deviceIdentity', { imei: ours })).statusCode).toBe(200);
    expect(await state()).toBe(before);
  });

  it('POST /api/v2/reregistration/decide: their device’s request is not found and stays pending', async () => {
    const before = await state();
    for (const session of [rAdmin, rSuper]) {
      for (const decision of ['approve', 'reject'] as const) {
        const response = await call(session.token, 'POST', '/api/v2/reregistration/decide', {
          id: theirRequest,
          decision,
        });
        expect([response.statusCode, response.json().message]).toEqual([404, 'No results found']);
      }
    }
    expect(await state()).toBe(before);
  });

  it('GET /api/v2/dashboard: counts only the retailer’s devices, registrations and commands', async () => {
    const mine = (await call(rUser.token, 'GET', '/api/v2/dashboard')).json();
    const all = (await call(superadmin.token, 'GET', '/api/v2/dashboard')).json();
    const sum = (rows: { count: number }[]) => rows.reduce((n, r) => n + r.count, 0);
    expect(all.devicesTotal).toBe(3);
    expect(sum(all.registrationsPerDay)).toBe(3);
    for (const session of [rUser, rAdmin, rSuper]) {
      const scoped =
        session === rUser ? mine : (await call(session.token, 'GET', '/api/v2/dashboard')).json();
      expect(scoped.devicesTotal).toBe(1);
      expect(scoped.devicesOnline).toBe(0);
      expect(sum(scoped.registrationsPerDay)).toBe(1);
      // Only the LOCK on their own device: none of the other retailer's commands (the batch's, the single).
      expect(scoped.commandsByStatus).toEqual([{ status: 'QUEUED', count: 1 }]);
    }
    expect(sum(all.commandsByStatus)).toBe(3);
  });

  it('POST /api/v2/pendingCommands: their device has none to show', async () => {
    for (const session of [rUser, rAdmin, rSuper])
      expect(
        (await call(session.token, 'POST', '/api/v2/pendingCommands', { imei: theirs })).json().items,
      ).toEqual([]);
    expect(
      (await call(rUser.token, 'POST', '/api/v2/pendingCommands', { imei: ours })).json().items,
    ).toHaveLength(1);
  });

  it('POST /api/v2/cancelCommand: their QUEUED command is not found and stays QUEUED', async () => {
    const before = await state();
    for (const session of [rUser, rAdmin, rSuper]) {
      const response = await call(session.token, 'POST', '/api/v2/cancelCommand', {
        transactionId: theirCommand,
      });
      expect(response.statusCode).toBe(404);
    }
    expect(await state()).toBe(before);
    const row = await database.db
      .selectFrom('commands')
      .select('status')
      .where('transaction_id', '=', theirCommand)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('QUEUED');
  });

  it('POST /api/v2/commandStatus: their command is not found', async () => {
    for (const session of [rUser, rAdmin, rSuper]) {
      const response = await call(session.token, 'POST', '/api/v2/commandStatus', {
        transactionId: theirCommand,
      });
      expect(response.statusCode).toBe(404);
    }
  });

  it('POST /api/v2/financedImeis and /upload: a retailer user cannot change the lender’s list', async () => {
    const before = await state();
    for (const session of [rAdmin, rSuper]) {
      const json = await call(session.token, 'POST', '/api/v2/financedImeis', { imeis: [theirs] });
      expect([json.statusCode, json.json().message]).toEqual([403, FINANCED_MESSAGES.retailer]);
      const body = multipart({}, { name: 'f.csv', type: 'text/csv', content: `imei1\n${theirs}\n` });
      const file = await server.app.inject({
        method: 'POST',
        url: '/api/v2/financedImeis/upload',
        headers: { ...body.headers, 'x-api-key': session.token },
        payload: body.payload,
      });
      expect([file.statusCode, file.json().message]).toEqual([403, FINANCED_MESSAGES.retailer]);
    }
    expect(await state()).toBe(before);
  });

  it('the batch calls: a retailer USER reaches no batch of another user', async () => {
    const before = await state();
    for (const path of [
      'batchStatus',
      'batch/progress',
      'batch/results',
      'batch/pause',
      'batch/resume',
      'batch/cancel',
    ]) {
      const response = await call(rUser.token, 'POST', `/api/v2/${path}`, {
        batchId: theirBatch,
        ...(path === 'batch/results' ? { offset: 0, limit: 100 } : {}),
      });
      expect(response.statusCode, path).toBeGreaterThanOrEqual(403);
      expect(response.statusCode, path).toBeLessThanOrEqual(404);
      expect(response.body, path).not.toContain(theirs);
    }
    const exported = await call(rUser.token, 'GET', `/api/v2/batch/export?batchId=${theirBatch}`);
    expect([403, 404]).toContain(exported.statusCode);
    expect(exported.body).not.toContain(theirs);
    const current = await call(rUser.token, 'POST', '/api/v2/batch/current', { statusOf: 'lockfiles' });
    expect(current.json()).toEqual({ status: 'success', batch: null });
    // The Batches screen lists none of another user's batches, at any level of the retailer's users.
    for (const session of [rUser, rAdmin, rSuper]) {
      const listed = await call(session.token, 'POST', '/api/v2/batches', {});
      expect(listed.json()).toEqual({ status: 'success', items: [], next: null });
    }
    expect(await state()).toBe(before);
  });

  it('GET /api/v2/reports/export: the retailer’s registrations only', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const url = `/api/v2/reports/export?report=registration&startdate=${day}&enddate=${day}&match=ALL`;
    expect((await call(superadmin.token, 'GET', url)).headers['x-total-rows']).toBe('3');
    for (const session of [rUser, rAdmin, rSuper]) {
      const response = await call(session.token, 'GET', url);
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-total-rows']).toBe('1');
    }
    const history = `/api/v2/reports/export?report=setwallpaper&startdate=${day}&enddate=${day}&part=commands`;
    expect((await call(rUser.token, 'GET', history)).headers['x-total-rows']).toBe('0');
  });

  it('GET /api/v2/uploads/:feature/:file: another user’s upload is not found', async () => {
    expect((await call(superadmin.token, 'GET', `/api/v2/uploads/${theirFile}`)).statusCode).toBe(200);
    for (const session of [rUser, rAdmin, rSuper]) {
      const response = await call(session.token, 'GET', `/api/v2/uploads/${theirFile}`);
      expect([response.statusCode, response.json().message]).toEqual([404, 'No such file']);
    }
  });

  it('POST /api/v2/audit/search and GET /api/v2/audit/export: no row about their devices', async () => {
    const all = (await call(superadmin.token, 'POST', '/api/v2/audit/search', { imei: theirs })).json();
    expect(all.total).toBeGreaterThan(0);
    const scoped = (await call(rSuper.token, 'POST', '/api/v2/audit/search', { imei: theirs })).json();
    expect(scoped).toMatchObject({ status: 'success', items: [], total: 0 });
    expect(scoped.totalCapped ?? false).toBe(false);
    const everything = (await call(rSuper.token, 'POST', '/api/v2/audit/search', { limit: 10_000 })).json();
    expect(everything.total).toBeGreaterThan(0);
    for (const row of everything.items as { target: string | null; actor: string }[]) {
      expect(row.target).not.toBe(theirs);
      expect(JSON.stringify(row)).not.toContain(theirs);
    }
    const ourRows = (await call(rSuper.token, 'POST', '/api/v2/audit/search', { imei: ours })).json();
    expect(ourRows.total).toBeGreaterThan(0);
    const exported = await call(rSuper.token, 'GET', `/api/v2/audit/export?imei=${theirs}`);
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['x-total-rows']).toBe('0');
  });

  it('covers every /api/v2/ call in the route table, or says why it holds no retailer data', () => {
    const covered = new Set([
      'POST /api/v2/deviceIdentity',
      'POST /api/v2/reregistration/decide',
      'GET /api/v2/dashboard',
      'POST /api/v2/pendingCommands',
      'POST /api/v2/cancelCommand',
      'POST /api/v2/commandStatus',
      'POST /api/v2/financedImeis',
      'POST /api/v2/financedImeis/upload',
      'POST /api/v2/batchStatus',
      'POST /api/v2/batch/progress',
      'POST /api/v2/batch/current',
      'POST /api/v2/batch/results',
      'POST /api/v2/batch/pause',
      'POST /api/v2/batch/resume',
      'POST /api/v2/batch/cancel',
      'GET /api/v2/batch/export',
      'POST /api/v2/batches',
      'GET /api/v2/reports/export',
      'GET /api/v2/uploads/:feature/:file',
      'POST /api/v2/audit/search',
      'GET /api/v2/audit/export',
      // Retailer scope proven beside the feature: test/audit-report-export.test.ts and
      // modules/webhooks/webhooks.test.ts (a retailer's endpoints, and only its devices' events).
      'GET /api/v2/auditReport/export',
      'GET /api/v2/webhooks',
      'POST /api/v2/webhooks',
      'POST /api/v2/webhooks/update',
      'POST /api/v2/webhooks/delete',
      'POST /api/v2/webhooks/deliveries',
      'POST /api/v2/webhooks/replay',
      // test/loans.test.ts: another retailer's IMEI or loan is not found, exactly as an unknown one.
      'POST /api/v2/loans',
      'POST /api/v2/loans/upload',
      'POST /api/v2/loans/get',
      'POST /api/v2/loans/promise',
      'POST /api/v2/payments',
      'POST /api/v2/payments/upload',
      // test/payments-ledger.test.ts: another retailer's payment is not found, exactly as an unknown one.
      'POST /api/v2/payments/reverse',
      // test/collections-api.test.ts: a retailer's user plans, holds and sees releases of its devices only;
      // another retailer's device is not found. The policy, kill switch and runs are the lender's, no device's.
      'GET /api/v2/collections/policy',
      'PUT /api/v2/collections/policy',
      'GET /api/v2/collections/policy/versions',
      'POST /api/v2/collections/plan',
      'POST /api/v2/collections/plan/export',
      'GET /api/v2/collections/kill-switch',
      'PUT /api/v2/collections/kill-switch',
      'GET /api/v2/collections/holds',
      'PUT /api/v2/collections/holds/:imei',
      'DELETE /api/v2/collections/holds/:imei',
      'GET /api/v2/collections/releases',
      'POST /api/v2/collections/releases/:id/approve',
      'POST /api/v2/collections/releases/:id/reject',
      'GET /api/v2/collections/runs',
      // test/collections-failures.test.ts: another retailer's user sees none of a device's failed actions.
      'GET /api/v2/collections/failures',
    ]);
    /** Calls about no device: enrollment secrets (the lender's admission of agents), the caller's own MFA. */
    const noDeviceData = /^(GET|POST) \/api\/v2\/(enrollmentSecrets|mfa)\b/;
    const unexplained = Object.keys(ROUTE_POLICIES).filter(
      (key) => key.includes(' /api/v2/') && !covered.has(key) && !noDeviceData.test(key),
    );
    expect(unexplained).toEqual([]);
  });
});
