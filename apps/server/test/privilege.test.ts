/**
 * Privilege and secrets: no answer anywhere carries a password hash, key hash, reset token or device
 * credential; a retailer user cannot reach another retailer's device; keys are rate-limited without
 * dropping an accepted command; two racing commands on one IMEI end in one well-defined state.
 */
import type { Session } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/lib/secrets';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, randomProfile, startDeviceServer, TEST_ENROLLMENT_SECRET } from './devices';
import { buildUser, loginAs } from './factories';

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
    const profile = randomProfile(overrides);
    const response = await server.app.inject({
      method: 'POST',
      url: '/device/v1/register',
      headers: { 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
      payload: profile,
    });
    return { imei: profile.imei1, credential: response.json().credential as string };
  };

  it('never answers with a password hash, key hash, reset token or device credential', async () => {
    const device = await register();
    const key = (
      await call(superadmin.token, 'POST', '/keyapi/generate_key.php', { key_name: 'leak check' })
    ).json().key as string;
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
    const admin = await loginAs(server.app, await buildUser(database, { userlevel: 'ADMIN' }));
    const key = (await call(admin.token, 'POST', '/keyapi/generate_key.php', { key_name: 'burst' })).json()
      .key as string;
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
