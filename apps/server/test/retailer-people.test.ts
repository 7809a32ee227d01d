/**
 * A retailer's users stay in their retailer (docs/tenancy.md "People"). Each way an ADMIN of
 * retailer 9999999999 could reach beyond it is refused here as an unknown account or
 * key would be, with users, permissions, sessions, keys and two-factor rows unchanged; a user it adds
 * belongs to its retailer whatever the request named. The lender's ADMIN still manages a retailer's USERs,
 * and a retailer's SUPERADMIN its retailer's ADMINs but no account of the lender.
 *
 * The people routes run with the authorization check enforced: every signed-in call decides in the
 * authority module, or answers 500.
 */
import {
  type ApiKey,
  type ConsoleUser,
  KEY_MESSAGES,
  MESSAGES,
  MFA_MESSAGES,
  type Session,
  USER_MESSAGES,
} from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildKey, buildTestApp, buildUser, loginAs, type TestUser } from './factories';

const RETAILER = '9999999999';
const OTHER_RETAILER = '9888888888';

describe.each(databaseKinds())('a retailer’s users stay in their retailer on %s', (kind) => {
  let database: TestDatabase;
  /** The people routes, with the authorization check enforced. */
  let app: FastifyInstance;
  /** The device routes (another module's; their decisions are not this suite's to check). */
  let devicesApp: FastifyInstance;
  let retailerAdmin: TestUser;
  let retailerSession: Session;
  let lenderUser: TestUser;
  let lenderSuperadmin: TestUser;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, { authorizationCheck: 'enforce' });
    devicesApp = await buildTestApp(database);
    retailerAdmin = await buildUser(database, { userlevel: 'ADMIN', retailerPhone: RETAILER });
    retailerSession = await loginAs(app, retailerAdmin);
    lenderUser = await buildUser(database, { permissions: ['lockDevice', 'keyManagement'] });
    lenderSuperadmin = await buildUser(database, { userlevel: 'SUPERADMIN' });
  });
  afterAll(async () => {
    await devicesApp?.close();
    await app?.close();
    await database?.close();
  });

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });

  /** Every row of the tables a people call could change, in order: a refusal leaves it as it was. */
  const fingerprint = async () => {
    const rows: Record<string, unknown[]> = {};
    for (const table of ['users', 'user_permissions', 'sessions', 'api_keys', 'user_mfa'] as const) {
      const result = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)}`.execute(
        database.db,
      );
      rows[table] = result.rows.map((row) => JSON.stringify(row)).sort();
    }
    return rows;
  };

  /** `refused` and `unknown` answer alike, and `refused` changed nothing. */
  const answersAsUnknown = async (
    refused: () => Promise<{ statusCode: number; json: () => unknown }>,
    unknown: () => Promise<{ statusCode: number; json: () => unknown }>,
    expected: { statusCode: number; message: string },
  ) => {
    const before = await fingerprint();
    const answer = await refused();
    expect(await fingerprint()).toEqual(before);
    const unknownAnswer = await unknown();
    expect([answer.statusCode, answer.json()]).toEqual([unknownAnswer.statusCode, unknownAnswer.json()]);
    expect(answer.statusCode).toBe(expected.statusCode);
    expect(answer.json()).toMatchObject({ message: expected.message });
  };

  const permissionIds = async (...names: string[]) => {
    const rows = await database.db
      .selectFrom('permissions')
      .select(['id', 'permission_name'])
      .where('permission_name', 'in', names)
      .execute();
    return rows.map((row) => row.id);
  };

  const seedDevices = async (retailerPhone: string | null, n: number) => {
    const seed = Math.floor(Math.random() * 1000);
    const base = Math.floor(Math.random() * 100_000_000) * 10;
    const imeis = Array.from({ length: n }, (_, i) => imeiFor(seed, base + i));
    await database.db
      .insertInto('devices')
      .values(
        imeis.map((imei1) => ({
          imei1,
          imei2: null,
          match_status: 'YES' as const,
          retailer_phone: retailerPhone,
        })),
      )
      .execute();
    return imeis;
  };

  const usersOf = async (token: string) => {
    const response = await call(token, 'GET', '/api/getUsers.php');
    expect(response.statusCode).toBe(200);
    return (response.json().items as ConsoleUser[]).map((user) => user.id);
  };
  const idsWhere = async (retailerPhone: string | null) =>
    (
      await database.db
        .selectFrom('users')
        .select('id')
        .where('retailer_phone', retailerPhone === null ? 'is' : '=', retailerPhone)
        .orderBy('id')
        .execute()
    ).map((row) => row.id);

  it('addUser.php naming no retailer, or another, adds the user to the adder’s retailer; signed in, it sees only that retailer’s devices and cannot lock the lender’s', async () => {
    const ours = await seedDevices(RETAILER, 2);
    const lenders = await seedDevices(null, 3);
    const permissions = await permissionIds('lockDevice', 'deviceDetails');
    const added: Pick<TestUser, 'email' | 'password'>[] = [];
    for (const [i, retailer_phone] of [null, OTHER_RETAILER, undefined].entries()) {
      const user = {
        email: `added-${i}-${Date.now()}@lendlock.com`,
        phone: `98765${String(Date.now() + i).slice(-5)}`,
        password: `pw-added-${i}-secret`,
      };
      const response = await call(retailerSession.token, 'POST', '/api/addUser.php', {
        ...user,
        permissions,
        ...(retailer_phone === undefined ? {} : { retailer_phone }),
      });
      expect([response.statusCode, response.json()]).toEqual([
        200,
        { status: 'success', message: MESSAGES.userAdded },
      ]);
      const row = await database.db
        .selectFrom('users')
        .select(['retailer_phone', 'userlevel'])
        .where('email', '=', user.email)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ retailer_phone: RETAILER, userlevel: 'USER' });
      added.push(user);
    }

    const [first] = added;
    if (!first) throw new Error('no user added');
    const session = await loginAs(devicesApp, first);
    expect(session.retailer_phone).toBe(RETAILER);
    const home = await devicesApp.inject({
      method: 'GET',
      url: '/api/homeData.php',
      headers: { 'x-api-key': session.token },
    });
    const retailerDevices = await database.db
      .selectFrom('devices')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('retailer_phone', '=', RETAILER)
      .executeTakeFirstOrThrow();
    expect(home.json().total_device).toBe(Number(retailerDevices.n));
    const details = (imei: string) =>
      devicesApp.inject({
        method: 'POST',
        url: '/api/devicedetails.php',
        headers: { 'x-api-key': session.token },
        payload: { imei },
      });
    expect((await details(ours[0] ?? '')).json().items).toHaveLength(1);
    expect((await details(lenders[0] ?? '')).json().items).toEqual([]);

    const commandsBefore = await database.db.selectFrom('commands').select('id').execute();
    const lock = (imei: string) =>
      devicesApp.inject({
        method: 'POST',
        url: '/api/locknotification.php',
        headers: { 'x-api-key': session.token },
        payload: { imei, action: 'lock' },
      });
    const refused = await lock(lenders[0] ?? '');
    expect(refused.statusCode).toBe(404);
    expect(refused.json()).toEqual((await lock(imeiFor(999, 123_456))).json());
    expect(await database.db.selectFrom('commands').select('id').execute()).toEqual(commandsBefore);
  });

  it('refuses a retailer ADMIN the ADMIN level for a new user, adding nobody', async () => {
    const before = await fingerprint();
    const response = await call(retailerSession.token, 'POST', '/api/addUser.php', {
      email: `raise-${Date.now()}@lendlock.com`,
      phone: '9876500001',
      password: 'pw-raise-secret',
      permissions: [],
      userlevel: 'ADMIN',
      retailer_phone: null,
    });
    expect([response.statusCode, response.json().message]).toEqual([403, USER_MESSAGES.levelRaise]);
    expect(await fingerprint()).toEqual(before);
  });

  it('lists only the retailer’s users (no lender SUPERADMIN), its two-factor users and its keys', async () => {
    const otherRetailerUser = await buildUser(database, { retailerPhone: OTHER_RETAILER });
    const ourKey = await buildKey(app, database, {
      retailerPhone: RETAILER,
      permissions: ['keyManagement'],
    });
    const lenderKey = await buildKey(app, database, { permissions: ['keyManagement'] });
    const otherKey = await buildKey(app, database, {
      retailerPhone: OTHER_RETAILER,
      permissions: ['keyManagement'],
    });
    for (const user of [lenderUser, otherRetailerUser, ourKey.owner])
      await database.db
        .insertInto('user_mfa')
        .values({ user_id: user.id, secret: 'sealed', confirmed_at: new Date() })
        .execute();

    const listed = await usersOf(retailerSession.token);
    expect(listed).toEqual(await idsWhere(RETAILER));
    expect(listed).not.toContain(lenderSuperadmin.id);
    expect(listed).not.toContain(otherRetailerUser.id);

    const mfa = await call(retailerSession.token, 'GET', '/api/v2/mfa/users');
    expect(mfa.json().userIds).toEqual([ourKey.owner.id]);

    const keys = await call(retailerSession.token, 'GET', '/keyapi/keymanagement/view_keys.php');
    expect(keys.statusCode).toBe(200);
    const keyIds = (keys.json() as ApiKey[]).map((key) => key.id);
    expect(keyIds).toContain(ourKey.id);
    expect(keyIds).not.toContain(lenderKey.id);
    expect(keyIds).not.toContain(otherKey.id);

    // The lender's SUPERADMIN still lists everyone.
    const lender = await loginAs(app, lenderSuperadmin);
    expect(await usersOf(lender.token)).toEqual(
      (await database.db.selectFrom('users').select('id').orderBy('id').execute()).map((r) => r.id),
    );
  });

  it('answers a lender USER as an unknown one to MFA reset, disable, forced logout and re-permission, changing nothing', async () => {
    await loginAs(app, lenderUser);
    await database.db
      .insertInto('user_mfa')
      .values({ user_id: lenderUser.id, secret: 'sealed', confirmed_at: new Date() })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .execute();
    const token = retailerSession.token;
    const nobody = 'nobody-at-all@lendlock.com';
    const notFound = { statusCode: 404, message: USER_MESSAGES.notFound };

    await answersAsUnknown(
      () => call(token, 'POST', '/api/v2/mfa/reset', { email: lenderUser.email }),
      () => call(token, 'POST', '/api/v2/mfa/reset', { email: nobody }),
      notFound,
    );
    await answersAsUnknown(
      () => call(token, 'POST', '/api/updateUserStatus.php', { email: lenderUser.email, status: 'INACTIVE' }),
      () => call(token, 'POST', '/api/updateUserStatus.php', { email: nobody, status: 'INACTIVE' }),
      notFound,
    );
    await answersAsUnknown(
      () =>
        call(token, 'POST', '/api/updateLoginStatus.php', { email: lenderUser.email, deactivateKeys: true }),
      () => call(token, 'POST', '/api/updateLoginStatus.php', { email: nobody, deactivateKeys: true }),
      notFound,
    );
    const everything = await permissionIds('lockDevice', 'unlockDevice', 'deviceDetails', 'reports');
    await answersAsUnknown(
      () =>
        call(token, 'POST', '/api/updateUser.php', {
          id: lenderUser.id,
          email: lenderUser.email,
          phone: lenderUser.phone,
          permissions: everything,
        }),
      () =>
        call(token, 'POST', '/api/updateUser.php', {
          id: 2_000_000_000,
          email: lenderUser.email,
          phone: lenderUser.phone,
          permissions: everything,
        }),
      notFound,
    );
    // Nor the lender's SUPERADMIN or another retailer's USER.
    const otherRetailerUser = await buildUser(database, { retailerPhone: OTHER_RETAILER });
    for (const target of [lenderSuperadmin, otherRetailerUser])
      await answersAsUnknown(
        () => call(token, 'POST', '/api/updateUserStatus.php', { email: target.email, status: 'INACTIVE' }),
        () => call(token, 'POST', '/api/updateUserStatus.php', { email: nobody, status: 'INACTIVE' }),
        notFound,
      );
  });

  it('answers a lender user’s API key as an unknown one: not listed, not switched off', async () => {
    const lenderKey = await buildKey(app, database, { permissions: ['keyManagement'] });
    const listed = await call(retailerSession.token, 'GET', '/keyapi/keymanagement/view_keys.php');
    expect((listed.json() as ApiKey[]).map((key) => key.id)).not.toContain(lenderKey.id);
    await answersAsUnknown(
      () =>
        call(retailerSession.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
          keyId: lenderKey.id,
          status: 'inactive',
        }),
      () =>
        call(retailerSession.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
          keyId: 2_000_000_000,
          status: 'inactive',
        }),
      { statusCode: 404, message: KEY_MESSAGES.notFound },
    );
    const row = await database.db
      .selectFrom('api_keys')
      .select('status')
      .where('id', '=', lenderKey.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('active');
  });

  it('lets the retailer ADMIN manage its own retailer’s USER, and the lender’s ADMIN too', async () => {
    const ours = await buildUser(database, { retailerPhone: RETAILER });
    const { id: keyId } = await buildKey(app, database, {
      retailerPhone: RETAILER,
      permissions: ['keyManagement'],
    });
    const disabled = await call(retailerSession.token, 'POST', '/api/updateUserStatus.php', {
      email: ours.email,
      status: 'INACTIVE',
    });
    expect(disabled.json()).toEqual({ status: 'success', message: USER_MESSAGES.statusUpdated('INACTIVE') });
    const keyOff = await call(retailerSession.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId,
      status: 'inactive',
    });
    expect(keyOff.statusCode).toBe(200);

    const lenderAdmin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    expect(await usersOf(lenderAdmin.token)).toContain(ours.id);
    const enabled = await call(lenderAdmin.token, 'POST', '/api/updateUserStatus.php', {
      email: ours.email,
      status: 'ACTIVE',
    });
    expect(enabled.json()).toEqual({ status: 'success', message: USER_MESSAGES.statusUpdated('ACTIVE') });
    const row = await database.db
      .selectFrom('users')
      .select('userstatus')
      .where('id', '=', ours.id)
      .executeTakeFirstOrThrow();
    expect(row.userstatus).toBe('ACTIVE');
  });

  it('lets a retailer SUPERADMIN manage its retailer’s ADMINs but no lender account', async () => {
    const superadmin = await buildUser(database, { userlevel: 'SUPERADMIN', retailerPhone: RETAILER });
    const session = await loginAs(app, superadmin);
    const ourAdmin = await buildUser(database, { userlevel: 'ADMIN', retailerPhone: RETAILER });
    const forced = await call(session.token, 'POST', '/api/updateLoginStatus.php', { email: ourAdmin.email });
    expect(forced.json()).toEqual({ status: 'success', message: USER_MESSAGES.loggedOut });
    const raised = await call(session.token, 'POST', '/api/updateUser.php', {
      id: ourAdmin.id,
      email: ourAdmin.email,
      phone: ourAdmin.phone,
      permissions: [],
      userlevel: 'SUPERADMIN',
    });
    expect(raised.json()).toEqual({ status: 'success', message: MESSAGES.userUpdated });

    // A SUPERADMIN it adds belongs to its retailer too.
    const email = `retailer-super-${Date.now()}@lendlock.com`;
    const added = await call(session.token, 'POST', '/api/addUser.php', {
      email,
      phone: `98764${String(Date.now()).slice(-5)}`,
      password: 'pw-retailer-super',
      permissions: [],
      userlevel: 'SUPERADMIN',
      retailer_phone: null,
    });
    expect(added.statusCode).toBe(200);
    const row = await database.db
      .selectFrom('users')
      .select(['retailer_phone', 'userlevel'])
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ retailer_phone: RETAILER, userlevel: 'SUPERADMIN' });

    const lenderAdmin = await buildUser(database, { userlevel: 'ADMIN' });
    for (const target of [lenderAdmin, lenderSuperadmin, lenderUser]) {
      await answersAsUnknown(
        () => call(session.token, 'POST', '/api/updateLoginStatus.php', { email: target.email }),
        () => call(session.token, 'POST', '/api/updateLoginStatus.php', { email: 'nobody@lendlock.com' }),
        { statusCode: 404, message: USER_MESSAGES.notFound },
      );
      await answersAsUnknown(
        () => call(session.token, 'POST', '/api/v2/mfa/reset', { email: target.email }),
        () => call(session.token, 'POST', '/api/v2/mfa/reset', { email: 'nobody@lendlock.com' }),
        { statusCode: 404, message: USER_MESSAGES.notFound },
      );
    }
  });

  it('decides every signed-in people call, a self-service one included', async () => {
    const user = await buildUser(database, { retailerPhone: RETAILER, permissions: ['keyManagement'] });
    const session = await loginAs(app, user);
    for (const [method, url] of [
      ['GET', '/api/getPermissions.php'],
      ['GET', '/api/getUsers.php'],
      ['GET', '/api/v2/mfa/users'],
    ] as const)
      expect((await call(retailerSession.token, method, url)).statusCode).toBe(200);
    expect((await call(session.token, 'GET', '/api/v2/mfa/status')).statusCode).toBe(200);
    const started = await call(session.token, 'POST', '/api/v2/mfa/enrol/start', {});
    expect(started.statusCode).toBe(200);
    const code = await generate({ secret: started.json().secret.replaceAll(' ', '') });
    expect((await call(session.token, 'POST', '/api/v2/mfa/enrol/confirm', { code })).statusCode).toBe(200);
    // Its retailer's ADMIN resets it (and ends its sessions); then it signs in again.
    const reset = await call(retailerSession.token, 'POST', '/api/v2/mfa/reset', { email: user.email });
    expect(reset.json()).toEqual({ status: 'success', message: MFA_MESSAGES.reset });
    const again = await loginAs(app, user);
    expect((await call(again.token, 'GET', '/keyapi/keymanagement/view_keys.php')).statusCode).toBe(200);
    expect((await call(again.token, 'POST', '/api/logout.php', {})).statusCode).toBe(200);
  });
});
