import {
  ENVELOPE_HEADER,
  ENVELOPE_HEADER_VALUE,
  LOGGED_IN,
  MESSAGES,
  PERMISSION_NAMES,
  type Session,
} from '@lendlock/contract';
import { createNodeEnvelopeCodec } from '@lendlock/contract/node';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../src/lib/secrets';
import { endUserSessions, SESSION_END } from '../src/modules/sessions/repository';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildKey, buildTestApp, buildUser, loginAs, type TestUser } from './factories';

describe.each(databaseKinds())('sign-in and sessions on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, { loginMaxFailuresPerAccount: 3, loginMaxFailuresPerAddress: 8 });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const post = (payload: unknown, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: '/api/login.php', payload: payload as object, headers });

  it('signs a user in by email and returns the session fields login.php answers', async () => {
    const user = await buildUser(database, {
      permissions: ['lockDevice', 'reports'],
      retailerPhone: '9876500000',
    });
    const before = Date.now();
    const response = await post({ email: user.email, password: user.password });
    expect(response.statusCode).toBe(200);
    const session = response.json() as Session;
    expect(session).toMatchObject({
      status: 'success',
      email: user.email,
      userlevel: 'USER',
      loggedin: LOGGED_IN,
      retailer_phone: '9876500000',
    });
    expect(session.permissions.map((p) => p.permission_name)).toEqual(['lockDevice', 'reports']);
    expect(session.permissions.every((p) => Number.isInteger(p.id))).toBe(true);
    expect(session.token.length).toBeGreaterThanOrEqual(40);
    const expiry = Date.parse(session.expiry);
    expect(expiry).toBeGreaterThanOrEqual(before + 8 * 3600_000 - 5000);
    expect(expiry).toBeLessThanOrEqual(Date.now() + 8 * 3600_000 + 5000);
    // The token is stored hashed only.
    const stored = await database.db.selectFrom('sessions').select('token_hash').execute();
    expect(stored.map((s) => s.token_hash)).not.toContain(session.token);
  });

  it('signs a user in by 10-digit phone; no retailer_phone when the user has none', async () => {
    const user = await buildUser(database);
    const session = (await post({ email: user.phone, password: user.password })).json() as Session;
    expect(session.email).toBe(user.email);
    expect(session).not.toHaveProperty('retailer_phone');
  });

  it('gives one message for a wrong password and an unknown account', async () => {
    const user = await buildUser(database);
    const wrong = await post({ email: user.email, password: 'not-the-password' });
    const unknown = await post({ email: 'nobody@lendlock.com', password: 'whatever' });
    expect(wrong.statusCode).toBe(401);
    expect(unknown.statusCode).toBe(401);
    expect(wrong.json()).toEqual({
      status: 'error',
      code: 'INVALID_CREDENTIALS',
      message: MESSAGES.loginInvalid,
    });
    expect(unknown.json()).toEqual(wrong.json());
  });

  it('refuses an INACTIVE user with a clear message and creates no session', async () => {
    const user = await buildUser(database);
    await database.db
      .updateTable('users')
      .set({ userstatus: 'INACTIVE' })
      .where('id', '=', user.id)
      .execute();
    const response = await post({ email: user.email, password: user.password });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toBe(MESSAGES.loginInactive);
    const sessions = await database.db
      .selectFrom('sessions')
      .select('token_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(sessions).toHaveLength(0);
  });

  it('admits only SUPERADMIN accounts through /superadmin/login', async () => {
    const adminUser = await buildUser(database, { userlevel: 'ADMIN' });
    const superUser = await buildUser(database, { userlevel: 'SUPERADMIN' });
    const refused = await post(
      { email: adminUser.email, password: adminUser.password },
      { 'x-login-client': 'superadmin' },
    );
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(MESSAGES.loginSuperadminOnly);
    const ok = await post(
      { email: superUser.email, password: superUser.password },
      { 'x-login-client': 'superadmin' },
    );
    expect(ok.statusCode).toBe(200);
    expect(ok.json().userlevel).toBe('SUPERADMIN');
  });

  it('logout ends the session on the server: the token stops working at once', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    const first = await app.inject({
      method: 'POST',
      url: '/api/logout.php',
      headers: { 'x-api-key': session.token },
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toEqual({ status: 'success', message: MESSAGES.logoutSuccess });
    const again = await app.inject({
      method: 'POST',
      url: '/api/logout.php',
      headers: { 'x-api-key': session.token },
    });
    expect(again.statusCode).toBe(401);
    expect(again.json()).toEqual({
      status: 'error',
      code: 'UNAUTHENTICATED',
      message: MESSAGES.authorizationFailed,
      reason: 'signed_out',
    });
    const row = await database.db
      .selectFrom('sessions')
      .select(['ended_reason'])
      .where('user_id', '=', user.id)
      .executeTakeFirst();
    expect(row?.ended_reason).toBe('logout');
  });

  it('an expired session is refused with Authorization Failed', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    await database.db
      .updateTable('sessions')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('user_id', '=', user.id)
      .execute();
    const response = await app.inject({
      method: 'POST',
      url: '/api/logout.php',
      headers: { 'x-api-key': session.token },
    });
    expect(response.statusCode).toBe(401);
    expect(response.json().message).toBe(MESSAGES.authorizationFailed);
  });

  it('a session of a user disabled after sign-in stops working', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    await database.db
      .updateTable('users')
      .set({ userstatus: 'INACTIVE' })
      .where('id', '=', user.id)
      .execute();
    const response = await app.inject({
      method: 'POST',
      url: '/api/logout.php',
      headers: { 'x-api-key': session.token },
    });
    expect(response.statusCode).toBe(401);
  });

  it('throttles failures per account from one address without locking out the owner elsewhere or other users', async () => {
    const victim = await buildUser(database);
    const bystander = await buildUser(database);
    const attacker = { 'x-forwarded-for': '203.0.113.9' }; // ignored: TRUST_PROXY is off
    for (let i = 0; i < 3; i++) {
      expect((await post({ email: victim.email, password: `guess-${i}` }, attacker)).statusCode).toBe(401);
    }
    const blocked = await post({ email: victim.email, password: victim.password });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ code: 'RATE_LIMITED', message: MESSAGES.loginThrottled(15) });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another user from the same address still signs in.
    expect((await post({ email: bystander.email, password: bystander.password })).statusCode).toBe(200);
    // The owner from another address still signs in.
    const elsewhere = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      remoteAddress: '198.51.100.7',
      payload: { email: victim.email, password: victim.password },
    });
    expect(elsewhere.statusCode).toBe(200);
  });

  it('throttles a client address that sprays many accounts', async () => {
    const remoteAddress = '192.0.2.44';
    for (let i = 0; i < 8; i++) {
      await app.inject({
        method: 'POST',
        url: '/api/login.php',
        remoteAddress,
        payload: { email: `spray${i}@lendlock.com`, password: 'x' },
      });
    }
    const user = await buildUser(database);
    const blocked = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      remoteAddress,
      payload: { email: user.email, password: user.password },
    });
    expect(blocked.statusCode).toBe(429);
    expect((await post({ email: user.email, password: user.password })).statusCode).toBe(200);
  });

  it('accepts an enveloped login and answers with an envelope', async () => {
    const user = await buildUser(database);
    const config = (await app.inject({ method: 'GET', url: '/config.json' })).json();
    const codec = createNodeEnvelopeCodec(config.envelopeKey);
    const response = await post(codec.seal({ email: user.email, password: user.password }));
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(Object.keys(body).sort()).toEqual(['payload', 'transactionId']);
    expect(codec.open<Session>(body).email).toBe(user.email);
  });

  it('envelopes error answers too when the console asks for envelopes', async () => {
    const config = (await app.inject({ method: 'GET', url: '/config.json' })).json();
    const codec = createNodeEnvelopeCodec(config.envelopeKey);
    const response = await app.inject({
      method: 'POST',
      url: '/api/logout.php',
      headers: { [ENVELOPE_HEADER]: ENVELOPE_HEADER_VALUE, 'x-api-key': 'x'.repeat(43) },
    });
    expect(response.statusCode).toBe(401);
    expect(codec.open(response.json())).toEqual({
      status: 'error',
      code: 'UNAUTHENTICATED',
      message: MESSAGES.authorizationFailed,
    });
  });

  it('refuses a broken envelope with a clear error and no session', async () => {
    const response = await post({ payload: 'bm90IGNpcGhlcnRleHQ=', transactionId: '00'.repeat(16) });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ status: 'error', code: 'BAD_ENVELOPE' });
  });

  it('refuses a body without a password with a validation error', async () => {
    const response = await post({ email: 'a@lendlock.com' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({ status: 'error', code: 'VALIDATION_FAILED' });
    expect(response.json().message).toMatch(/password/);
  });

  it('seeds the permission list from the screen names', async () => {
    const rows = await database.db
      .selectFrom('permissions')
      .select('permission_name')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.permission_name)).toEqual([...PERMISSION_NAMES]);
  });

  describe('a 401 of a session that ended says why', () => {
    const home = (token: string) =>
      app.inject({ method: 'GET', url: '/api/homeData.php', headers: { 'x-api-key': token } });
    const hashOf = (token: string) => sha256Hex(token);
    /** The session's last use recorded `interval` ago, as the database's clock sees it. */
    const usedAgo = (token: string, interval: string) =>
      database.db
        .updateTable('sessions')
        .set({ last_used_at: sql<Date>`now() - ${interval}::interval` })
        .where('token_hash', '=', hashOf(token))
        .execute();
    let admin: Session;
    beforeAll(async () => {
      admin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
    });
    const asAdmin = (url: string, payload: object) =>
      app.inject({ method: 'POST', url: `/api/${url}`, headers: { 'x-api-key': admin.token }, payload });

    it.each([
      [
        'signed out',
        'signed_out',
        async (_user: TestUser, token: string) => {
          await app.inject({ method: 'POST', url: '/api/logout.php', headers: { 'x-api-key': token } });
        },
      ],
      [
        'forced out',
        'ended_by_admin',
        async (user: TestUser) => {
          await asAdmin('updateLoginStatus.php', { email: user.email });
        },
      ],
      [
        'disabled',
        'ended_by_admin',
        async (user: TestUser) => {
          await asAdmin('updateUserStatus.php', { email: user.email, status: 'INACTIVE' });
        },
      ],
      [
        'password reset',
        'password_reset',
        async (user: TestUser) => {
          await endUserSessions(database.db, user.id, SESSION_END.passwordReset);
        },
      ],
      [
        'two-factor reset',
        'ended_by_admin',
        async (user: TestUser) => {
          await endUserSessions(database.db, user.id, SESSION_END.mfaReset);
        },
      ],
      [
        'past its expiry',
        'expired',
        async (_user: TestUser, token: string) => {
          await database.db
            .updateTable('sessions')
            .set({ expires_at: sql<Date>`now() - interval '1 second'` })
            .where('token_hash', '=', hashOf(token))
            .execute();
        },
      ],
      [
        'forced out after it had expired',
        'expired',
        async (user: TestUser, token: string) => {
          await database.db
            .updateTable('sessions')
            .set({ expires_at: sql<Date>`now() - interval '1 minute'` })
            .where('token_hash', '=', hashOf(token))
            .execute();
          await asAdmin('updateLoginStatus.php', { email: user.email });
        },
      ],
      [
        'unused for SESSION_IDLE_TIMEOUT (30 minutes here) and the minute its last use may lag',
        'idle',
        async (_user: TestUser, token: string) => {
          await usedAgo(token, '32 minutes');
        },
      ],
      [
        'of a user made INACTIVE without ending it',
        'ended_by_admin',
        async (user: TestUser) => {
          await database.db
            .updateTable('users')
            .set({ userstatus: 'INACTIVE' })
            .where('id', '=', user.id)
            .execute();
        },
      ],
    ] as const)('%s: reason %s, beside the spec’s message', async (_, reason, end) => {
      const user = await buildUser(database);
      const { token } = await loginAs(app, user);
      expect((await home(token)).statusCode).toBe(200);
      await end(user, token);
      const response = await home(token);
      expect(response.statusCode).toBe(401);
      expect(response.json()).toEqual({
        status: 'error',
        code: 'UNAUTHENTICATED',
        message: MESSAGES.authorizationFailed,
        reason,
      });
    });

    it('a session in use stays: each call records its use, at most once a minute; keys have no idle end', async () => {
      const user = await buildUser(database);
      const { token } = await loginAs(app, user);
      const lastUse = async () =>
        (
          await database.db
            .selectFrom('sessions')
            .select(sql<number>`extract(epoch from now() - last_used_at)::float8`.as('ago'))
            .where('token_hash', '=', hashOf(token))
            .executeTakeFirstOrThrow()
        ).ago;

      // Last used 30.5 minutes ago as recorded: within the minute the record may lag, so still live.
      await usedAgo(token, '30 minutes 30 seconds');
      expect((await home(token)).statusCode).toBe(200);
      expect(await lastUse()).toBeLessThan(5);
      // Used again within the minute: nothing written (the record keeps its time).
      await usedAgo(token, '30 seconds');
      expect((await home(token)).statusCode).toBe(200);
      expect(await lastUse()).toBeGreaterThanOrEqual(30);

      // An integrator key works whatever its owner's sessions do.
      const { key, session } = await buildKey(app, database);
      await usedAgo(session.token, '2 days');
      expect((await home(session.token)).json().reason).toBe('idle');
      const byKey = await app.inject({
        method: 'GET',
        url: '/api/homeData.php',
        headers: { 'x-api-key': key },
      });
      expect(byKey.statusCode).toBe(200);

      const config = (await app.inject({ method: 'GET', url: '/config.json' })).json();
      expect(config.sessionIdleTimeoutMs).toBe(30 * 60_000);
    });

    it('says nothing more for a token it does not know, a deactivated key, or no token', async () => {
      const { id, key } = await buildKey(app, database);
      await database.db.updateTable('api_keys').set({ status: 'inactive' }).where('id', '=', id).execute();
      for (const headers of [{ 'x-api-key': 'x'.repeat(43) }, { 'x-api-key': key }, {}]) {
        const response = await app.inject({ method: 'GET', url: '/api/homeData.php', headers });
        expect(response.statusCode).toBe(401);
        expect(response.json()).toEqual({
          status: 'error',
          code: 'UNAUTHENTICATED',
          message: MESSAGES.authorizationFailed,
        });
      }
    });

    it('the console, which asks for envelopes, finds the reason inside the sealed answer', async () => {
      const user = await buildUser(database);
      const { token } = await loginAs(app, user);
      await asAdmin('updateLoginStatus.php', { email: user.email });
      const config = (await app.inject({ method: 'GET', url: '/config.json' })).json();
      const codec = createNodeEnvelopeCodec(config.envelopeKey);
      const response = await app.inject({
        method: 'GET',
        url: '/api/homeData.php',
        headers: { [ENVELOPE_HEADER]: ENVELOPE_HEADER_VALUE, 'x-api-key': token },
      });
      expect(codec.open(response.json())).toMatchObject({ reason: 'ended_by_admin' });
    });
  });

  it('records sign-ins in the append-only audit log', async () => {
    const user = await buildUser(database);
    await loginAs(app, user);
    const row = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'result'])
      .where('actor', '=', user.email)
      .where('result', '=', 'success')
      .executeTakeFirst();
    expect(row).toEqual({ actor: user.email, action: 'login', result: 'success' });
    // The app's own role may not even try (no UPDATE or DELETE grant); as the tables' owner, the trigger
    // refuses.
    await expect(database.db.deleteFrom('audit_log').execute()).rejects.toThrow(
      /permission denied|append-only/,
    );
    const asOwner = (statement: 'delete' | 'update') =>
      database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        if (statement === 'delete') await trx.deleteFrom('audit_log').execute();
        else await trx.updateTable('audit_log').set({ result: 'x' }).execute();
      });
    await expect(asOwner('delete')).rejects.toThrow(/append-only/);
    await expect(asOwner('update')).rejects.toThrow(/append-only/);
  });
});
