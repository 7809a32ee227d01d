import { type ApiKey, KEY_MESSAGES, MESSAGES, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/lib/secrets';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs, type TestUser } from './factories';

describe.each(databaseKinds())('key management on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let admin: TestUser;
  let adminSession: Session;
  /** Every user signed in by `signIn`, by session token: `generate` types their password again. */
  const passwords = new Map<string, string>();

  const signIn = async (user: TestUser) => {
    const session = await loginAs(app, user);
    passwords.set(session.token, user.password);
    return session;
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database);
    admin = await buildUser(database, { userlevel: 'ADMIN' });
    adminSession = await signIn(admin);
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
  const generate = (session: Session, keyName: string, extra: object = {}) =>
    call(session.token, 'POST', '/keyapi/generate_key.php', {
      key_name: keyName,
      password: passwords.get(session.token),
      ...extra,
    });

  it('generates a key shown once and stores only its hash', async () => {
    const response = await generate(adminSession, 'Collections partner');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ status: 'success', message: KEY_MESSAGES.generated });
    expect(body.key).toMatch(/^llk_[A-Za-z0-9_-]{43}$/);
    const row = await database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', body.id)
      .executeTakeFirstOrThrow();
    expect(row.key_hash).toBe(sha256Hex(body.key));
    const list = await call(adminSession.token, 'GET', '/keyapi/keymanagement/view_keys.php');
    expect(list.body).not.toContain(body.key);
    expect(list.body).not.toContain(row.key_hash);
    const listed = (list.json() as ApiKey[]).find((k) => k.id === body.id);
    expect(listed).toMatchObject({ key_name: 'Collections partner', status: 'active', last_used_at: null });
  });

  it('an active key authenticates calls with its creator rights and records its last use; a deactivated key is refused', async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const session = await signIn(user);
    const { key, id } = (await generate(session, 'integration')).json();
    // The key is a credential: logout.php needs a console session, so the key gets 401 there; ...
    expect((await call(key, 'POST', '/api/logout.php')).statusCode).toBe(401);
    // ... and it carries its creator's rights: a USER's key cannot reach user management.
    expect((await call(key, 'GET', '/api/getUsers.php')).statusCode).toBe(401);
    const { findPrincipalByKey } = await import('../src/modules/auth/repository');
    const principal = await findPrincipalByKey(database.db, key);
    expect(principal).toMatchObject({ credential: 'key', userId: user.id, userlevel: 'USER', keyId: id });
    // A call the key may make records its use.
    expect((await call(key, 'GET', '/api/homeData.php')).statusCode).toBe(200);
    const used = await database.db
      .selectFrom('api_keys')
      .select('last_used_at')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(used.last_used_at).not.toBeNull();
    const off = await call(session.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId: id,
      status: 'inactive',
    });
    expect(off.json()).toEqual({ status: 'success', message: KEY_MESSAGES.statusUpdated('inactive') });
    expect(await findPrincipalByKey(database.db, key)).toBeNull();
    await call(session.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId: id,
      status: 'active',
    });
    expect(await findPrincipalByKey(database.db, key)).not.toBeNull();
  });

  it('refuses a key created for someone else, and a USER without keyManagement', async () => {
    const other = await buildUser(database);
    const response = await generate(adminSession, 'not mine', { user_id: other.id });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toBe(KEY_MESSAGES.onlyOwn);
    const plain = await signIn(await buildUser(database));
    const refused = await generate(plain, 'nope');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(MESSAGES.unauthorised);
    expect((await call(plain.token, 'GET', '/keyapi/keymanagement/view_keys.php')).statusCode).toBe(403);
  });

  it('a USER sees and changes only their own keys; an ADMIN cannot touch a SUPERADMIN key', async () => {
    const superSession = await signIn(await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const superKey = (await generate(superSession, 'super')).json();
    const user = await signIn(await buildUser(database, { permissions: ['keyManagement'] }));
    const own = (await generate(user, 'mine')).json();
    const seen = (await call(user.token, 'GET', '/keyapi/keymanagement/view_keys.php')).json() as ApiKey[];
    expect(seen.map((k) => k.id)).toEqual([own.id]);
    const before = await database.db.selectFrom('api_keys').select(['id', 'status']).orderBy('id').execute();
    for (const [token, keyId] of [
      [user.token, superKey.id],
      [adminSession.token, superKey.id],
    ] as const) {
      const response = await call(token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
        keyId,
        status: 'inactive',
      });
      expect(response.statusCode).toBe(403);
      expect(response.json().message).toBe(KEY_MESSAGES.notYours);
    }
    expect(await database.db.selectFrom('api_keys').select(['id', 'status']).orderBy('id').execute()).toEqual(
      before,
    );
  });

  it('audits key creation and status changes', async () => {
    const { id } = (await generate(adminSession, 'audited')).json();
    await call(adminSession.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId: id,
      status: 'inactive',
    });
    const rows = await database.db
      .selectFrom('audit_log')
      .select(['action', 'actor'])
      .where('target', '=', `key:${id}`)
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.action)).toEqual(['key.generate', 'key.status']);
    expect(rows[0]?.actor).toBe(adminSession.email);
  });
  /** What a refused key call must leave as it was: every key row. */
  const keyRows = () => database.db.selectFrom('api_keys').selectAll().orderBy('id').execute();
  const setStatus = (session: Session, keyId: number, status: 'active' | 'inactive') =>
    call(session.token, 'POST', '/keyapi/keymanagement/update_key_status.php', { keyId, status });
  const listedBy = async (session: Session, keyId: number) =>
    ((await call(session.token, 'GET', '/keyapi/keymanagement/view_keys.php')).json() as ApiKey[]).find(
      (k) => k.id === keyId,
    );

  it('a stolen session cannot generate a key: the password is asked again, a wrong one creates nothing', async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const session = await signIn(user);
    const before = await keyRows();

    const wrong = await generate(session, 'stolen session', { password: 'not-the-password' });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json()).toEqual({
      status: 'error',
      code: 'INVALID_CREDENTIALS',
      message: KEY_MESSAGES.wrongPassword,
    });
    const missing = await call(session.token, 'POST', '/keyapi/generate_key.php', {
      key_name: 'no password',
    });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().message).toBe('Invalid password: Password is required');
    expect(await keyRows()).toEqual(before);
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'result'])
      .where('action', '=', 'key.generate')
      .where('actor', '=', user.email)
      .execute();
    expect(audit).toEqual([{ actor: user.email, result: 'wrong password' }]);

    // The refusal is not 'Authorization Failed': the owner's session goes on, and the right password works.
    const ok = await generate(session, 'typed again');
    expect(ok.statusCode).toBe(200);
    expect((await keyRows()).length).toBe(before.length + 1);
  });

  it('wrong passwords at Generate Key count as failed sign-ins: the account is throttled there and at login', async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const session = await signIn(user);
    const remoteAddress = '192.0.2.41';
    const fromThere = (password: string) =>
      app.inject({
        method: 'POST',
        url: '/keyapi/generate_key.php',
        remoteAddress,
        headers: { 'x-api-key': session.token },
        payload: { key_name: 'guessing', password },
      });
    const before = await keyRows();
    for (let i = 0; i < app.ctx.config.loginMaxFailuresPerAccount; i++) {
      expect((await fromThere(`guess-${i}`)).statusCode).toBe(401);
    }
    const throttled = /^Too many failed sign-in attempts\. Please try again in \d+ minutes?\.$/;
    // Even the right password is refused now, and no key is created.
    const blocked = await fromThere(user.password);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().message).toMatch(throttled);
    expect(blocked.headers['retry-after']).toBeDefined();
    expect(await keyRows()).toEqual(before);
    // The same count guards the login screen from that address…
    const login = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      remoteAddress,
      payload: { email: user.email, password: user.password },
    });
    expect(login.statusCode).toBe(429);
    expect(login.json().message).toMatch(throttled);
    // …and the owner elsewhere is not locked out.
    expect((await loginAs(app, user)).email).toBe(user.email);
  });

  it('an ADMIN does not list SUPERADMIN keys; a SUPERADMIN lists every key', async () => {
    const superSession = await signIn(await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const superKey = (await generate(superSession, 'super only')).json();
    const userSession = await signIn(await buildUser(database, { permissions: ['keyManagement'] }));
    const userKey = (await generate(userSession, 'user key')).json();
    const adminKey = (await generate(adminSession, 'admin key')).json();

    const byAdmin = (await call(adminSession.token, 'GET', '/keyapi/keymanagement/view_keys.php')).json();
    const adminSees = (byAdmin as ApiKey[]).map((k) => k.id);
    expect(adminSees).toEqual(expect.arrayContaining([userKey.id, adminKey.id]));
    expect(adminSees).not.toContain(superKey.id);
    const owners = await database.db
      .selectFrom('api_keys')
      .innerJoin('users', 'users.id', 'api_keys.user_id')
      .select('users.userlevel')
      .where('api_keys.id', 'in', adminSees)
      .execute();
    expect(owners.every((o) => o.userlevel !== 'SUPERADMIN')).toBe(true);
    const bySuper = (await call(superSession.token, 'GET', '/keyapi/keymanagement/view_keys.php')).json();
    expect((bySuper as ApiKey[]).map((k) => k.id)).toEqual(
      expect.arrayContaining([superKey.id, userKey.id, adminKey.id]),
    );
  });

  it('a key an ADMIN deactivated cannot be re-activated by its USER owner; the list says who and why', async () => {
    const owner = await signIn(await buildUser(database, { permissions: ['keyManagement'] }));
    const { id } = (await generate(owner, 'partner feed')).json();
    expect((await setStatus(adminSession, id, 'inactive')).statusCode).toBe(200);
    const shown = await listedBy(owner, id);
    expect(shown).toMatchObject({
      status: 'inactive',
      deactivated_by: admin.email,
      deactivated_by_level: 'ADMIN',
      deactivated_reason: 'manual',
    });
    expect(shown?.deactivated_at).toEqual(expect.any(String));

    const before = await keyRows();
    const refused = await setStatus(owner, id, 'active');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(KEY_MESSAGES.reactivationNeeds('ADMIN'));
    // Switching it "off" again does not lower what is recorded either.
    expect((await setStatus(owner, id, 'inactive')).statusCode).toBe(200);
    expect(await keyRows()).toEqual(before);

    // An ADMIN may; the reason is then forgotten.
    expect((await setStatus(adminSession, id, 'active')).statusCode).toBe(200);
    expect(await listedBy(owner, id)).toMatchObject({
      status: 'active',
      deactivated_at: null,
      deactivated_by: null,
      deactivated_by_level: null,
      deactivated_reason: null,
    });
  });

  it('a key a SUPERADMIN deactivated cannot be re-activated by its ADMIN owner; a SUPERADMIN can', async () => {
    const superSession = await signIn(await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const owner = await signIn(await buildUser(database, { userlevel: 'ADMIN' }));
    const { id } = (await generate(owner, 'admin integration')).json();
    expect((await setStatus(superSession, id, 'inactive')).statusCode).toBe(200);
    const before = await keyRows();
    const refused = await setStatus(owner, id, 'active');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(KEY_MESSAGES.reactivationNeeds('SUPERADMIN'));
    expect(await keyRows()).toEqual(before);
    expect((await setStatus(superSession, id, 'active')).statusCode).toBe(200);
  });

  it('the owner switches on again a key they switched off themselves', async () => {
    const owner = await signIn(await buildUser(database, { userlevel: 'ADMIN' }));
    const { id } = (await generate(owner, 'own pause')).json();
    expect((await setStatus(owner, id, 'inactive')).statusCode).toBe(200);
    expect(await listedBy(owner, id)).toMatchObject({
      deactivated_by: owner.email,
      deactivated_by_level: 'ADMIN',
      deactivated_reason: 'manual',
    });
    expect((await setStatus(owner, id, 'active')).statusCode).toBe(200);
  });
});
