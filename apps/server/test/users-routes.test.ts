import { type ApiKey, type ConsoleUser, KEY_MESSAGES, MESSAGES, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USER_MESSAGES } from '../src/modules/users/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs, type TestUser } from './factories';

describe.each(databaseKinds())('user management on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let superadmin: TestUser;
  let admin: TestUser;
  let superSession: Session;
  let adminSession: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database);
    superadmin = await buildUser(database, { userlevel: 'SUPERADMIN' });
    admin = await buildUser(database, { userlevel: 'ADMIN' });
    superSession = await loginAs(app, superadmin);
    adminSession = await loginAs(app, admin);
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const call = (session: Session | string, method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({
      method,
      url: `/api/${url}`,
      headers: { 'x-api-key': typeof session === 'string' ? session : session.token },
      ...(payload ? { payload } : {}),
    });

  /** Everything a refused call must leave untouched. */
  const snapshot = async () => ({
    users: await database.db.selectFrom('users').selectAll().orderBy('id').execute(),
    permissions: await database.db
      .selectFrom('user_permissions')
      .selectAll()
      .orderBy('user_id')
      .orderBy('permission_id')
      .execute(),
    liveSessions: await database.db
      .selectFrom('sessions')
      .select('token_hash')
      .where('ended_at', 'is', null)
      .orderBy('token_hash')
      .execute(),
    keys: await database.db.selectFrom('api_keys').selectAll().orderBy('id').execute(),
  });

  /** Signs `user` in and generates a key for them (the password typed again, as Key Management asks). */
  const keyOf = async (user: TestUser, keyName = 'integration'): Promise<{ id: number; key: string }> => {
    const session = await loginAs(app, user);
    const response = await app.inject({
      method: 'POST',
      url: '/keyapi/generate_key.php',
      headers: { 'x-api-key': session.token },
      payload: { key_name: keyName, password: user.password },
    });
    if (response.statusCode !== 200) throw new Error(`generate_key: ${response.body}`);
    return response.json();
  };
  const keyCall = (key: string) =>
    app.inject({ method: 'GET', url: '/api/homeData.php', headers: { 'x-api-key': key } });
  const keyRow = (id: number) =>
    database.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const keyAudit = (id: number) =>
    database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'details'])
      .where('action', '=', 'key.status')
      .where('target', '=', `key:${id}`)
      .orderBy('id')
      .execute();

  const permissionId = async (name: string) =>
    (
      await database.db
        .selectFrom('permissions')
        .select('id')
        .where('permission_name', '=', name)
        .executeTakeFirstOrThrow()
    ).id;

  const listed = async (email: string): Promise<ConsoleUser | undefined> =>
    ((await call(adminSession, 'GET', 'getUsers.php')).json().items as ConsoleUser[]).find(
      (u) => u.email === email,
    );

  it('lists users with permissions, status and derived login status, never a password hash', async () => {
    const user = await buildUser(database, { permissions: ['lockDevice'] });
    const response = await call(adminSession, 'GET', 'getUsers.php');
    expect(response.statusCode).toBe(200);
    expect(response.body).not.toContain('argon2');
    expect(response.body).not.toContain('password');
    const item = (response.json().items as ConsoleUser[]).find((u) => u.email === user.email);
    expect(item).toMatchObject({
      phone: user.phone,
      userstatus: 'ACTIVE',
      loginstatus: 'LOGOUT',
      userlevel: 'USER',
    });
    expect(item?.permission_names).toEqual(['lockDevice']);
    expect(item?.permissions).toEqual(item?.permissions_id);
    await loginAs(app, user);
    expect((await listed(user.email))?.loginstatus).toBe('LOGIN');
  });

  it('lists the permissions as id and permission_name', async () => {
    const response = await call(adminSession, 'GET', 'getPermissions.php');
    const permissions = response.json().permissions as { id: number; permission_name: string }[];
    expect(permissions.map((p) => p.permission_name)).toContain('lockDevice');
    expect(permissions.every((p) => Number.isInteger(p.id))).toBe(true);
  });

  it('adds a USER with permissions sent as numbers, who can then sign in', async () => {
    const permissions = (await call(adminSession, 'GET', 'getPermissions.php')).json().permissions as {
      id: number;
      permission_name: string;
    }[];
    const ids = permissions
      .filter((p) => ['reports', 'auditReport'].includes(p.permission_name))
      .map((p) => p.id);
    const response = await call(adminSession, 'POST', 'addUser.php', {
      email: 'new.operator@lendlock.in',
      phone: '9811111111',
      password: 'Str0ng-passphrase',
      permissions: ids,
    });
    expect(response.json()).toEqual({ status: 'success', message: MESSAGES.userAdded });
    const session = await loginAs(app, { email: 'new.operator@lendlock.in', password: 'Str0ng-passphrase' });
    expect(session.permissions.map((p) => p.permission_name).sort()).toEqual(['auditReport', 'reports']);
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'address'])
      .where('action', '=', 'user.add')
      .where('target', '=', 'new.operator@lendlock.in')
      .executeTakeFirst();
    expect(audit).toMatchObject({ actor: admin.email, result: 'success' });
    expect(audit?.address).toBeTruthy();
  });

  it.each([
    [
      { email: 'x@gmail.com', phone: '9822222222', password: 'Str0ng-passphrase' },
      MESSAGES.invalidEmailDomain,
    ],
    [{ email: 'x@lendlock.com', phone: '98222', password: 'Str0ng-passphrase' }, MESSAGES.invalidPhone],
    [{ email: 'x@lendlock.com', phone: '98222222221', password: 'Str0ng-passphrase' }, MESSAGES.invalidPhone],
    [{ email: 'x@lendlock.com', phone: '9822222222', password: '' }, 'Password is required'],
    [
      { email: 'x@lendlock.com', phone: '9822222222', password: 'short-pass' },
      'Password must be at least 12 characters',
    ],
    [{ email: 'x@lendlock.com', phone: '9822222222', password: 'Password1234' }, MESSAGES.passwordTooCommon],
    [
      { email: 'x@lendlock.com', phone: '9822222222', password: 'Str0ng-passphrase', permissions: [99999] },
      'Unknown permission: 99999',
    ],
  ])('refuses a bad new user (%o) with its message and stores nothing', async (body, message) => {
    const before = await snapshot();
    const response = await call(adminSession, 'POST', 'addUser.php', { permissions: [], ...body });
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(message);
    expect(await snapshot()).toEqual(before);
  });

  it('refuses a duplicate email or phone with a clear message', async () => {
    const existing = await buildUser(database);
    const byEmail = await call(adminSession, 'POST', 'addUser.php', {
      email: existing.email.toUpperCase(),
      phone: '9833333333',
      password: 'Str0ng-passphrase',
      permissions: [],
    });
    expect(byEmail.statusCode).toBe(409);
    expect(byEmail.json().message).toBe(USER_MESSAGES.emailTaken);
    const byPhone = await call(adminSession, 'POST', 'addUser.php', {
      email: 'other@lendlock.com',
      phone: existing.phone,
      password: 'Str0ng-passphrase',
      permissions: [],
    });
    expect(byPhone.json().message).toBe(USER_MESSAGES.phoneTaken);
  });

  it('edits phone and permissions; the email is read-only', async () => {
    const user = await buildUser(database, { permissions: ['lockDevice'] });
    const permissions = (await call(adminSession, 'GET', 'getPermissions.php')).json().permissions as {
      id: number;
      permission_name: string;
    }[];
    const reports = permissions.find((p) => p.permission_name === 'reports')?.id;
    const ok = await call(adminSession, 'POST', 'updateUser.php', {
      id: user.id,
      email: user.email,
      phone: '9844444444',
      permissions: [reports],
    });
    expect(ok.json()).toEqual({ status: 'success', message: MESSAGES.userUpdated });
    expect(await listed(user.email)).toMatchObject({ phone: '9844444444', permission_names: ['reports'] });
    const renamed = await call(adminSession, 'POST', 'updateUser.php', {
      id: user.id,
      email: 'renamed@lendlock.com',
      phone: '9844444444',
      permissions: [],
    });
    expect(renamed.statusCode).toBe(400);
    expect(renamed.json().message).toBe(USER_MESSAGES.emailReadOnly);
  });

  it('disabling ends every session and refuses sign-in; enabling restores it', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    const disabled = await call(adminSession, 'POST', 'updateUserStatus.php', {
      email: user.email,
      status: 'INACTIVE',
    });
    expect(disabled.statusCode).toBe(200);
    expect((await call(session, 'POST', 'logout.php')).statusCode).toBe(401);
    expect(await listed(user.email)).toMatchObject({ userstatus: 'INACTIVE', loginstatus: 'LOGOUT' });
    const refused = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      payload: { email: user.email, password: user.password },
    });
    expect(refused.json().message).toBe(MESSAGES.loginInactive);
    await call(adminSession, 'POST', 'updateUserStatus.php', { email: user.email, status: 'ACTIVE' });
    expect((await loginAs(app, user)).email).toBe(user.email);
  });

  it('forced logout ends all sessions at once and shows LOGOUT', async () => {
    const user = await buildUser(database);
    const a = await loginAs(app, user);
    const b = await loginAs(app, user);
    expect((await listed(user.email))?.loginstatus).toBe('LOGIN');
    expect(
      (await call(adminSession, 'POST', 'updateLoginStatus.php', { email: user.email })).statusCode,
    ).toBe(200);
    expect((await call(a, 'POST', 'logout.php')).statusCode).toBe(401);
    expect((await call(b, 'POST', 'logout.php')).statusCode).toBe(401);
    expect((await listed(user.email))?.loginstatus).toBe('LOGOUT');
  });

  it('refuses every ADMIN action on an ADMIN or SUPERADMIN account, or raising a level, changing nothing', async () => {
    const otherAdmin = await buildUser(database, { userlevel: 'ADMIN' });
    const plain = await buildUser(database);
    await keyOf(otherAdmin);
    await keyOf(superadmin);
    const before = await snapshot();
    const attempts = [
      call(adminSession, 'POST', 'updateUserStatus.php', { email: otherAdmin.email, status: 'INACTIVE' }),
      call(adminSession, 'POST', 'updateUserStatus.php', { email: superadmin.email, status: 'INACTIVE' }),
      call(adminSession, 'POST', 'updateLoginStatus.php', { email: superadmin.email }),
      call(adminSession, 'POST', 'updateLoginStatus.php', { email: otherAdmin.email, deactivateKeys: true }),
      call(adminSession, 'POST', 'updateUser.php', {
        id: otherAdmin.id,
        email: otherAdmin.email,
        phone: '9855555555',
        permissions: [],
      }),
      call(adminSession, 'POST', 'updateUser.php', {
        id: plain.id,
        email: plain.email,
        phone: plain.phone,
        permissions: [],
        userlevel: 'ADMIN',
      }),
      call(adminSession, 'POST', 'addUser.php', {
        email: 'boss@lendlock.com',
        phone: '9866666666',
        password: 'Str0ng-passphrase',
        permissions: [],
        userlevel: 'SUPERADMIN',
      }),
    ];
    for (const response of await Promise.all(attempts)) {
      expect(response.statusCode).toBe(403);
      expect([USER_MESSAGES.usersOnly, USER_MESSAGES.levelRaise]).toContain(response.json().message);
    }
    expect(await snapshot()).toEqual(before);
  });

  it('never disables or forces out the last active SUPERADMIN', async () => {
    const lone = await openTestDatabase(kind);
    const loneApp = await buildTestApp(lone);
    try {
      const only = await buildUser(lone, { userlevel: 'SUPERADMIN' });
      const session = await loginAs(loneApp, only);
      for (const [url, payload] of [
        ['updateUserStatus.php', { email: only.email, status: 'INACTIVE' }],
        ['updateLoginStatus.php', { email: only.email }],
      ] as const) {
        const response = await loneApp.inject({
          method: 'POST',
          url: `/api/${url}`,
          headers: { 'x-api-key': session.token },
          payload,
        });
        expect(response.statusCode).toBe(403);
        expect(response.json().message).toBe(USER_MESSAGES.lastSuperadmin);
      }
      // With a second active SUPERADMIN, the first may be disabled.
      const second = await buildUser(lone, { userlevel: 'SUPERADMIN' });
      const ok = await loneApp.inject({
        method: 'POST',
        url: '/api/updateUserStatus.php',
        headers: { 'x-api-key': session.token },
        payload: { email: second.email, status: 'INACTIVE' },
      });
      expect(ok.statusCode).toBe(200);
    } finally {
      await loneApp.close();
      await lone.close();
    }
  });

  it('a SUPERADMIN may create an ADMIN and manage it', async () => {
    const response = await call(superSession, 'POST', 'addUser.php', {
      email: 'lead@lendlock.com',
      phone: '9877777777',
      password: 'Str0ng-passphrase',
      permissions: [],
      userlevel: 'ADMIN',
    });
    expect(response.statusCode).toBe(200);
    expect((await listed('lead@lendlock.com'))?.userlevel).toBe('ADMIN');
    expect(
      (
        await call(superSession, 'POST', 'updateUserStatus.php', {
          email: 'lead@lendlock.com',
          status: 'INACTIVE',
        })
      ).statusCode,
    ).toBe(200);
  });

  it('USERs (even holding userManagement from before) and integrator keys cannot reach user management', async () => {
    const user = await buildUser(database);
    // A grant the server no longer gives a USER, as an earlier version left it.
    await database.db
      .insertInto('user_permissions')
      .values({ user_id: user.id, permission_id: await permissionId('userManagement') })
      .execute();
    const session = await loginAs(app, user);
    const response = await call(session, 'GET', 'getUsers.php');
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toBe(MESSAGES.unauthorised);
    // Refused, not signed out: the session still works.
    expect((await call(session, 'GET', 'homeData.php')).statusCode).toBe(200);
    const { key } = await keyOf(admin, 'k');
    expect((await call(key, 'GET', 'getUsers.php')).statusCode).toBe(401);
  });

  it.each([
    ['userManagement', 'User Management'],
    ['deviceAction', 'Device Action'],
  ])(
    'never gives a USER %s (it opens nothing for one): refused by name, nothing changed',
    async (name, label) => {
      const id = await permissionId(name);
      const reports = await permissionId('reports');
      const user = await buildUser(database, { permissions: ['reports'] });
      const before = await snapshot();
      const attempts = [
        call(adminSession, 'POST', 'addUser.php', {
          email: 'grant.me@lendlock.com',
          phone: '9888888881',
          password: 'Str0ng-passphrase',
          permissions: [reports, id],
        }),
        call(superSession, 'POST', 'addUser.php', {
          email: 'grant.me@lendlock.com',
          phone: '9888888881',
          password: 'Str0ng-passphrase',
          permissions: [id],
          userlevel: 'USER',
        }),
        call(adminSession, 'POST', 'updateUser.php', {
          id: user.id,
          email: user.email,
          phone: user.phone,
          permissions: [reports, id],
        }),
        // Lowered to USER with it: the same refusal, and the level stays.
        call(superSession, 'POST', 'updateUser.php', {
          id: admin.id,
          email: admin.email,
          phone: admin.phone,
          permissions: [id],
          userlevel: 'USER',
        }),
      ];
      for (const response of await Promise.all(attempts)) {
        expect(response.statusCode).toBe(400);
        expect(response.json().message).toBe(USER_MESSAGES.notForUser(label));
      }
      expect(await snapshot()).toEqual(before);
      // By name too (the CLI's way), through the same rule.
      await expect(buildUser(database, { permissions: [name] })).rejects.toThrow(
        USER_MESSAGES.notForUser(label),
      );
      // An ADMIN account may hold it (it changes nothing for one).
      const lead = await call(superSession, 'POST', 'addUser.php', {
        email: `lead.${name}@lendlock.com`,
        phone: name === 'userManagement' ? '9888888882' : '9888888883',
        password: 'Str0ng-passphrase',
        permissions: [id],
        userlevel: 'ADMIN',
      });
      expect(lead.statusCode).toBe(200);
    },
  );

  it('the two Set Wallpaper routes are one grant: batch is no permission', async () => {
    const names = (
      (await call(adminSession, 'GET', 'getPermissions.php')).json().permissions as {
        permission_name: string;
      }[]
    ).map((p) => p.permission_name);
    expect(names).toContain('setWallpaper');
    expect(names).not.toContain('batch');
  });

  it("a SUPERADMIN changes a user's level: audited with both levels, the user's sessions end (401 says an administrator)", async () => {
    const user = await buildUser(database, { permissions: ['reports'] });
    const session = await loginAs(app, user);
    const raised = await call(superSession, 'POST', 'updateUser.php', {
      id: user.id,
      email: user.email,
      phone: user.phone,
      permissions: [],
      userlevel: 'ADMIN',
    });
    expect(raised.json()).toEqual({ status: 'success', message: MESSAGES.userUpdated });
    expect(await listed(user.email)).toMatchObject({ userlevel: 'ADMIN', loginstatus: 'LOGOUT' });
    const refused = await call(session, 'GET', 'homeData.php');
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toMatchObject({ message: MESSAGES.authorizationFailed, reason: 'ended_by_admin' });
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'details'])
      .where('action', '=', 'user.update')
      .where('target', '=', user.email)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(audit).toMatchObject({ actor: superadmin.email, result: 'success' });
    expect(audit.details).toMatchObject({ userlevel: 'ADMIN', levelFrom: 'USER', sessionsEnded: 1 });

    // The same level again changes no session.
    const again = await loginAs(app, user);
    await call(superSession, 'POST', 'updateUser.php', {
      id: user.id,
      email: user.email,
      phone: user.phone,
      permissions: [],
      userlevel: 'ADMIN',
    });
    expect((await call(again, 'GET', 'homeData.php')).statusCode).toBe(200);
  });

  it('an ADMIN changes no level, not even of a USER, and nothing changes', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    const before = await snapshot();
    for (const userlevel of ['ADMIN', 'SUPERADMIN'] as const) {
      const response = await call(adminSession, 'POST', 'updateUser.php', {
        id: user.id,
        email: user.email,
        phone: user.phone,
        permissions: [],
        userlevel,
      });
      expect(response.statusCode).toBe(403);
      expect(response.json().message).toBe(USER_MESSAGES.levelRaise);
    }
    // Lowering an ADMIN is managing an ADMIN: refused as well.
    const lower = await call(adminSession, 'POST', 'updateUser.php', {
      id: admin.id,
      email: admin.email,
      phone: admin.phone,
      permissions: [],
      userlevel: 'USER',
    });
    expect(lower.statusCode).toBe(403);
    expect(lower.json().message).toBe(USER_MESSAGES.usersOnly);
    expect(await snapshot()).toEqual(before);
    expect((await call(session, 'GET', 'homeData.php')).statusCode).toBe(200);
  });

  it('the last active SUPERADMIN cannot lose that level', async () => {
    const lone = await openTestDatabase(kind);
    const loneApp = await buildTestApp(lone);
    try {
      const only = await buildUser(lone, { userlevel: 'SUPERADMIN' });
      const session = await loginAs(loneApp, only);
      const response = await loneApp.inject({
        method: 'POST',
        url: '/api/updateUser.php',
        headers: { 'x-api-key': session.token },
        payload: { id: only.id, email: only.email, phone: only.phone, permissions: [], userlevel: 'ADMIN' },
      });
      expect(response.statusCode).toBe(403);
      expect(response.json().message).toBe(USER_MESSAGES.lastSuperadminLevel);
      const row = await lone.db
        .selectFrom('users')
        .select('userlevel')
        .where('id', '=', only.id)
        .executeTakeFirst();
      expect(row?.userlevel).toBe('SUPERADMIN');
    } finally {
      await loneApp.close();
      await lone.close();
    }
  });

  it('disabling a user switches their API keys off, audited with the reason; enabling leaves them off', async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const first = await keyOf(user, 'first');
    const second = await keyOf(user, 'second');
    expect((await keyCall(first.key)).statusCode).toBe(200);

    const disabled = await call(adminSession, 'POST', 'updateUserStatus.php', {
      email: user.email,
      status: 'INACTIVE',
    });
    expect(disabled.statusCode).toBe(200);
    for (const { id } of [first, second]) {
      expect(await keyRow(id)).toMatchObject({
        status: 'inactive',
        deactivated_by: admin.id,
        deactivated_by_level: 'ADMIN',
        deactivated_reason: 'account disabled',
      });
      const [row] = await keyAudit(id);
      expect(row).toMatchObject({ actor: admin.email, result: 'success' });
      expect(row?.details).toMatchObject({ reason: 'account disabled', to: 'inactive' });
    }

    // Enabled again, the account is back but its keys are not: the owner cannot switch them on…
    await call(adminSession, 'POST', 'updateUserStatus.php', { email: user.email, status: 'ACTIVE' });
    expect((await keyCall(first.key)).statusCode).toBe(401);
    const owner = await loginAs(app, user);
    const before = await snapshot();
    const refused = await app.inject({
      method: 'POST',
      url: '/keyapi/keymanagement/update_key_status.php',
      headers: { 'x-api-key': owner.token },
      payload: { keyId: first.id, status: 'active' },
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(KEY_MESSAGES.reactivationNeeds('ADMIN'));
    expect(await snapshot()).toEqual(before);
    // …and Key Management shows why.
    const listed = await app.inject({
      method: 'GET',
      url: '/keyapi/keymanagement/view_keys.php',
      headers: { 'x-api-key': owner.token },
    });
    expect((listed.json() as ApiKey[]).find((k) => k.id === first.id)).toMatchObject({
      status: 'inactive',
      deactivated_by: admin.email,
      deactivated_reason: 'account disabled',
    });
  });

  it("forced logout keeps the user's keys unless asked: with deactivateKeys they go off too, audited", async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const { id, key } = await keyOf(user);
    await loginAs(app, user);

    // The spec's call, without the flag: sessions end, the key keeps working.
    const plain = await call(adminSession, 'POST', 'updateLoginStatus.php', { email: user.email });
    expect(plain.json()).toEqual({ status: 'success', message: USER_MESSAGES.loggedOut });
    expect((await keyCall(key)).statusCode).toBe(200);
    expect((await keyRow(id)).status).toBe('active');

    const withKeys = await call(adminSession, 'POST', 'updateLoginStatus.php', {
      email: user.email,
      deactivateKeys: true,
    });
    expect(withKeys.json()).toEqual({ status: 'success', message: USER_MESSAGES.loggedOutWithKeys(1) });
    expect((await keyCall(key)).statusCode).toBe(401);
    expect(await keyRow(id)).toMatchObject({
      status: 'inactive',
      deactivated_by: admin.id,
      deactivated_by_level: 'ADMIN',
      deactivated_reason: 'forced logout',
    });
    const [row] = await keyAudit(id);
    expect(row?.details).toMatchObject({ reason: 'forced logout' });
    const logoutAudit = await database.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'user.forceLogout')
      .where('target', '=', user.email)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow();
    expect(logoutAudit.details).toMatchObject({ keysDeactivated: [id] });
  });

  it('a SUPERADMIN disabling an ADMIN records SUPERADMIN: the ADMIN, enabled again, cannot switch the keys on', async () => {
    const lead = await buildUser(database, { userlevel: 'ADMIN' });
    const { id } = await keyOf(lead);
    await call(superSession, 'POST', 'updateUserStatus.php', { email: lead.email, status: 'INACTIVE' });
    expect((await keyRow(id)).deactivated_by_level).toBe('SUPERADMIN');
    await call(superSession, 'POST', 'updateUserStatus.php', { email: lead.email, status: 'ACTIVE' });
    const session = await loginAs(app, lead);
    const before = await snapshot();
    for (const token of [session.token, adminSession.token]) {
      const refused = await app.inject({
        method: 'POST',
        url: '/keyapi/keymanagement/update_key_status.php',
        headers: { 'x-api-key': token },
        payload: { keyId: id, status: 'active' },
      });
      expect(refused.statusCode).toBe(403);
    }
    expect(await snapshot()).toEqual(before);
  });
});
