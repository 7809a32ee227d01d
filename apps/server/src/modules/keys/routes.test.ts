import { type ApiKey, MESSAGES, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from '../../../test/db';
import { buildTestApp, buildUser, loginAs } from '../../../test/factories';
import { sha256Hex } from '../../lib/secrets';
import { KEY_MESSAGES } from './service';

describe.each(databaseKinds())('key management on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let adminSession: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database);
    adminSession = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
  const generate = (session: Session, keyName: string, extra: object = {}) =>
    call(session.token, 'POST', '/keyapi/generate_key.php', { key_name: keyName, ...extra });

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
    const session = await loginAs(app, user);
    const { key, id } = (await generate(session, 'integration')).json();
    // The key is a credential: logout.php needs a console session, so the key gets 401 there; ...
    expect((await call(key, 'POST', '/api/logout.php')).statusCode).toBe(401);
    // ... and it carries its creator's rights: a USER's key cannot reach user management.
    expect((await call(key, 'GET', '/api/getUsers.php')).statusCode).toBe(401);
    const { findPrincipalByKey } = await import('../auth/repository');
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
    const plain = await loginAs(app, await buildUser(database));
    const refused = await generate(plain, 'nope');
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(MESSAGES.unauthorised);
    expect((await call(plain.token, 'GET', '/keyapi/keymanagement/view_keys.php')).statusCode).toBe(403);
  });

  it('a USER sees and changes only their own keys; an ADMIN cannot touch a SUPERADMIN key', async () => {
    const superSession = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const superKey = (await generate(superSession, 'super')).json();
    const user = await loginAs(app, await buildUser(database, { permissions: ['keyManagement'] }));
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
});
