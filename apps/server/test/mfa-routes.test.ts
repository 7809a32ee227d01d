/**
 * Two-factor authentication through the API, on every database kind: enrolment, the second sign-in step,
 * the throttle and replay rules, recovery codes, the required levels and the administrators' reset.
 *
 * The authenticator app is otplib itself, on a clock of its own: `Date` is faked (and keeps running),
 * and `nextStep()` moves it one TOTP time step on, as the next code a person would read off their phone.
 */

import { randomBytes } from 'node:crypto';
import { MESSAGES, MFA_MESSAGES, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sealSecret } from '../src/modules/mfa/secret';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, type TestUser } from './factories';

let addresses = 0;
/** A client address of its own (and a network of its own), so one test's failures never throttle another. */
const freshAddress = () => `198.51.${++addresses}.7`;

async function nextStep(): Promise<void> {
  vi.setSystemTime(Date.now() + 30_000);
}

/** The current code of the app, after the clock moved one step (each code in these tests is new). */
async function nextCode(secret: string): Promise<string> {
  await nextStep();
  return generate({ secret });
}

/** A code no nearby time step of the secret has: a wrong guess. */
async function wrongCode(secret: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const near = new Set(
    await Promise.all([-60, -30, 0, 30, 60].map((d) => generate({ secret, epoch: now + d }))),
  );
  for (let n = 0; ; n++) {
    const guess = String(n).padStart(6, '0');
    if (!near.has(guess)) return guess;
  }
}

describe.each(databaseKinds())('two-factor authentication on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;

  beforeAll(async () => {
    vi.useFakeTimers({ toFake: ['Date'], shouldAdvanceTime: true });
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, {
      loginMaxFailuresPerAccount: 3,
      loginMaxFailuresPerAddress: 50,
      mfaRequiredLevels: ['ADMIN', 'SUPERADMIN'],
    });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    vi.useRealTimers();
  });

  const call = (
    method: 'GET' | 'POST',
    url: string,
    options: { token?: string; payload?: object; address?: string } = {},
  ) =>
    app.inject({
      method,
      url,
      remoteAddress: options.address ?? '127.0.0.1',
      headers: options.token ? { 'x-api-key': options.token } : {},
      ...(method === 'POST' ? { payload: options.payload ?? {} } : {}),
    });

  const passwordStep = (user: TestUser, address: string, headers: Record<string, string> = {}) =>
    app.inject({
      method: 'POST',
      url: '/api/login.php',
      remoteAddress: address,
      headers,
      payload: { email: user.email, password: user.password },
    });

  const verify = (payload: object, address: string) =>
    call('POST', '/api/v2/mfa/verify', { payload, address });

  const countRows = async (table: 'sessions' | 'user_mfa' | 'mfa_recovery_codes', userId: number) =>
    Number(
      (
        await sql<{
          n: number;
        }>`SELECT count(*)::int AS n FROM ${sql.table(table)} WHERE user_id = ${userId}`.execute(database.db)
      ).rows[0]?.n,
    );

  const auditOf = (email: string, action: string) =>
    database.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target', 'result', 'details'])
      .where((eb) => eb.or([eb('actor', '=', email), eb('target', '=', email)]))
      .where('action', '=', action)
      .orderBy('id')
      .execute();

  /** Signs in with the password and sets two-factor up: the app's secret and the ten recovery codes. */
  async function enrol(user: TestUser): Promise<{ secret: string; recoveryCodes: string[]; token: string }> {
    const session = (await passwordStep(user, freshAddress())).json() as Session;
    const started = await call('POST', '/api/v2/mfa/enrol/start', { token: session.token });
    expect(started.statusCode).toBe(200);
    const secret = started.json().secret.replaceAll(' ', '');
    const confirmed = await call('POST', '/api/v2/mfa/enrol/confirm', {
      token: session.token,
      payload: { code: await nextCode(secret) },
    });
    expect(confirmed.statusCode).toBe(200);
    return { secret, recoveryCodes: confirmed.json().recoveryCodes, token: session.token };
  }

  it('an ADMIN without two-factor gets a session that can only set it up, then sets it up', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const login = await passwordStep(admin, freshAddress());
    expect(login.statusCode).toBe(200);
    const session = login.json() as Session;
    expect(session).toMatchObject({ status: 'success', email: admin.email, mfa_enrolment_required: true });
    const token = session.token;

    // Nothing but the set-up: reads and changes are refused, and the changes change nothing.
    const usersBefore = await database.db.selectFrom('users').select('id').execute();
    for (const [method, url, payload] of [
      ['GET', '/api/homeData.php', undefined],
      ['GET', '/api/getUsers.php', undefined],
      [
        'POST',
        '/api/addUser.php',
        { email: 'x@lendlock.com', phone: '9000000001', password: 'pw-123456', permissions: [] },
      ],
      ['POST', '/keyapi/generate_key.php', { key_name: 'sneaky' }],
      ['POST', '/api/locknotification.php', { imei: '123456789012345', action: 'lock' }],
      ['POST', '/api/v2/mfa/reset', { email: admin.email }],
    ] as const) {
      const refused = await call(method, url, { token, ...(payload ? { payload } : {}) });
      expect({ url, status: refused.statusCode, body: refused.json() }).toEqual({
        url,
        status: 403,
        body: { status: 'error', code: 'MFA_ENROLMENT_REQUIRED', message: MFA_MESSAGES.enrolmentRequired },
      });
    }
    expect(await database.db.selectFrom('users').select('id').execute()).toEqual(usersBefore);
    expect(
      await database.db.selectFrom('api_keys').select('id').where('user_id', '=', admin.id).execute(),
    ).toEqual([]);

    const status = await call('GET', '/api/v2/mfa/status', { token });
    expect(status.json()).toEqual({
      status: 'success',
      enabled: false,
      required: true,
      recoveryCodesLeft: 0,
    });

    const started = await call('POST', '/api/v2/mfa/enrol/start', { token });
    expect(started.statusCode).toBe(200);
    const enrolment = started.json();
    const secret = enrolment.secret.replaceAll(' ', '');
    expect(enrolment.secret).toMatch(/^([A-Z2-7]{4} )+[A-Z2-7]{1,4}$/);
    expect(enrolment.otpauthUri).toMatch(/^otpauth:\/\/totp\//);
    expect(new URL(enrolment.otpauthUri).searchParams.get('secret')).toBe(secret);
    expect(enrolment.qrCode).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(enrolment.qrCode.split(',')[1], 'base64').toString()).toContain('<svg');
    // Stored sealed, never in clear.
    const stored = await database.db
      .selectFrom('user_mfa')
      .selectAll()
      .where('user_id', '=', admin.id)
      .executeTakeFirstOrThrow();
    expect(stored.secret).not.toContain(secret);
    expect(stored.confirmed_at).toBeNull();

    // A wrong code turns nothing on.
    const wrong = await call('POST', '/api/v2/mfa/enrol/confirm', {
      token,
      payload: { code: await wrongCode(secret) },
    });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.json().message).toBe(MFA_MESSAGES.codeInvalid);
    expect((await call('GET', '/api/homeData.php', { token })).statusCode).toBe(403);

    const confirmed = await call('POST', '/api/v2/mfa/enrol/confirm', {
      token,
      payload: { code: await nextCode(secret) },
    });
    expect(confirmed.statusCode).toBe(200);
    const { recoveryCodes, message } = confirmed.json();
    expect(message).toBe(MFA_MESSAGES.enabled);
    expect(recoveryCodes).toHaveLength(10);
    expect(new Set(recoveryCodes).size).toBe(10);
    for (const code of recoveryCodes) expect(code).toMatch(/^[0-9a-f]{5}(-[0-9a-f]{5}){3}$/);
    const hashes = await database.db
      .selectFrom('mfa_recovery_codes')
      .select(['code_hash', 'used_at'])
      .where('user_id', '=', admin.id)
      .execute();
    expect(hashes).toHaveLength(10);
    for (const row of hashes) {
      expect(row.used_at).toBeNull();
      expect(recoveryCodes.some((c: string) => row.code_hash.includes(c.replaceAll('-', '')))).toBe(false);
    }

    // The same session now reaches the console.
    expect((await call('GET', '/api/homeData.php', { token })).statusCode).toBe(200);
    // The secret is never handed out again, and a second set-up cannot replace it.
    const again = await call('POST', '/api/v2/mfa/enrol/start', { token });
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(MFA_MESSAGES.alreadyEnabled);
    const after = await database.db
      .selectFrom('user_mfa')
      .select('secret')
      .where('user_id', '=', admin.id)
      .executeTakeFirstOrThrow();
    expect(after.secret).toBe(stored.secret);
    expect((await call('GET', '/api/v2/mfa/status', { token })).json()).toMatchObject({
      enabled: true,
      recoveryCodesLeft: 10,
    });

    expect((await auditOf(admin.email, 'mfa.enrol.start')).map((a) => a.result)).toEqual(['success']);
    expect((await auditOf(admin.email, 'mfa.enrol')).map((a) => a.result)).toEqual([
      'invalid code',
      'success',
    ]);
  });

  it('a USER without two-factor signs in exactly as before, and may turn it on', async () => {
    const user = await buildUser(database, { permissions: ['reports'] });
    const login = await passwordStep(user, freshAddress());
    expect(login.statusCode).toBe(200);
    const session = login.json();
    expect(Object.keys(session).sort()).toEqual(
      ['email', 'expiry', 'loggedin', 'message', 'permissions', 'status', 'token', 'userlevel'].sort(),
    );
    expect((await call('GET', '/api/homeData.php', { token: session.token })).statusCode).toBe(200);
    expect((await call('GET', '/api/v2/mfa/status', { token: session.token })).json()).toMatchObject({
      enabled: false,
      required: false,
    });

    await enrol(user);
    const next = await passwordStep(user, freshAddress());
    expect(next.json()).toMatchObject({ status: 'mfa_required', message: MFA_MESSAGES.codePrompt });
  });

  it('with two-factor on, login.php answers a second step and the code exchanges it for the session', async () => {
    const admin = await buildUser(database, { userlevel: 'SUPERADMIN' });
    const { secret } = await enrol(admin);
    const address = freshAddress();
    const sessionsBefore = await countRows('sessions', admin.id);

    const step = await passwordStep(admin, address, { 'x-login-client': 'superadmin' });
    expect(step.statusCode).toBe(200);
    const challenge = step.json();
    expect(Object.keys(challenge).sort()).toEqual(['message', 'mfaToken', 'status']);
    expect(challenge).toMatchObject({ status: 'mfa_required', message: MFA_MESSAGES.codePrompt });
    // No session yet, and the token is kept as a hash only.
    expect(await countRows('sessions', admin.id)).toBe(sessionsBefore);
    const stored = await database.db
      .selectFrom('mfa_challenges')
      .select('token_hash')
      .where('user_id', '=', admin.id)
      .execute();
    expect(stored.map((s) => s.token_hash)).not.toContain(challenge.mfaToken);

    const verified = await verify({ mfaToken: challenge.mfaToken, code: await nextCode(secret) }, address);
    expect(verified.statusCode).toBe(200);
    const session = verified.json() as Session;
    expect(session).toMatchObject({
      status: 'success',
      message: MESSAGES.loginSuccess,
      email: admin.email,
      userlevel: 'SUPERADMIN',
    });
    expect(session).not.toHaveProperty('mfa_enrolment_required');
    expect(await countRows('sessions', admin.id)).toBe(sessionsBefore + 1);
    expect((await call('GET', '/api/v2/enrollmentSecrets', { token: session.token })).statusCode).toBe(200);
    const logins = await auditOf(admin.email, 'login');
    expect(logins.slice(-2).map((a) => [a.result, a.details])).toEqual([
      ['mfa required', null],
      ['success', { mfa: 'totp' }],
    ]);

    // The challenge is single-use: a second exchange, even with a new right code, is refused.
    const reused = await verify({ mfaToken: challenge.mfaToken, code: await nextCode(secret) }, address);
    expect(reused.statusCode).toBe(401);
    expect(reused.json()).toMatchObject({
      code: 'MFA_CHALLENGE_EXPIRED',
      message: MFA_MESSAGES.challengeExpired,
    });
    expect(await countRows('sessions', admin.id)).toBe(sessionsBefore + 1);
  });

  it('a code is used once: the same code again, or an older one, is refused and counted as a failure', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { secret } = await enrol(admin);
    const address = freshAddress();
    const older = await generate({ secret });
    const code = await nextCode(secret);
    const first = (await passwordStep(admin, address)).json().mfaToken;
    expect((await verify({ mfaToken: first, code }, address)).statusCode).toBe(200);
    const sessions = await countRows('sessions', admin.id);

    const second = (await passwordStep(admin, address)).json().mfaToken;
    const replay = await verify({ mfaToken: second, code }, address);
    expect(replay.statusCode).toBe(401);
    expect(replay.json()).toEqual({
      status: 'error',
      code: 'INVALID_CREDENTIALS',
      message: MFA_MESSAGES.codeReused,
    });
    const stale = await verify({ mfaToken: second, code: older }, address);
    expect(stale.statusCode).toBe(401);
    expect(await countRows('sessions', admin.id)).toBe(sessions);
    const failures = await database.db
      .selectFrom('login_throttle')
      .select('failures')
      .where('key', '=', `acct-addr:user:${admin.id}|${address}`)
      .executeTakeFirstOrThrow();
    expect(failures.failures).toBe(2);
    expect((await auditOf(admin.email, 'login.mfa')).map((a) => a.result)).toEqual([
      'code reused',
      'code reused',
    ]);
  });

  it('wrong codes are throttled like passwords, and typing the password again buys no more guesses', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { secret } = await enrol(admin);
    const address = freshAddress();
    const sessions = await countRows('sessions', admin.id);

    let token = (await passwordStep(admin, address)).json().mfaToken;
    for (let i = 0; i < 2; i++) {
      const wrong = await verify({ mfaToken: token, code: await wrongCode(secret) }, address);
      expect(wrong.statusCode).toBe(401);
      expect(wrong.json()).toMatchObject({ code: 'INVALID_CREDENTIALS', message: MFA_MESSAGES.codeInvalid });
    }
    // The right password again: a new second step, but the two failures stand.
    const again = await passwordStep(admin, address);
    expect(again.json().status).toBe('mfa_required');
    token = again.json().mfaToken;
    expect((await verify({ mfaToken: token, code: await wrongCode(secret) }, address)).statusCode).toBe(401);

    // Three failures (LOGIN_MAX_FAILURES_PER_ACCOUNT here): the right code and the password are refused.
    const blocked = await verify({ mfaToken: token, code: await nextCode(secret) }, address);
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json()).toMatchObject({ code: 'RATE_LIMITED', message: MESSAGES.loginThrottled(15) });
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    expect((await passwordStep(admin, address)).statusCode).toBe(429);
    expect(await countRows('sessions', admin.id)).toBe(sessions);
    expect((await auditOf(admin.email, 'login.mfa')).map((a) => a.result)).toEqual([
      'invalid code',
      'invalid code',
      'invalid code',
      'throttled',
    ]);

    // The owner, from elsewhere, still signs in.
    const elsewhere = freshAddress();
    const own = (await passwordStep(admin, elsewhere)).json().mfaToken;
    expect((await verify({ mfaToken: own, code: await nextCode(secret) }, elsewhere)).statusCode).toBe(200);
  });

  it('a recovery code signs in once instead of a code', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { recoveryCodes } = await enrol(admin);
    const address = freshAddress();
    const code = recoveryCodes[3] as string;

    const token = (await passwordStep(admin, address)).json().mfaToken;
    // Typed as people do: capitals, spaces instead of dashes.
    const typed = ` ${code.toUpperCase().replaceAll('-', ' ')} `;
    const used = await verify({ mfaToken: token, recoveryCode: typed }, address);
    expect(used.statusCode).toBe(200);
    expect(used.json()).toMatchObject({ status: 'success', email: admin.email });
    const rows = await database.db
      .selectFrom('mfa_recovery_codes')
      .select('used_at')
      .where('user_id', '=', admin.id)
      .execute();
    expect(rows.filter((r) => r.used_at !== null)).toHaveLength(1);
    expect((await auditOf(admin.email, 'mfa.recovery.use')).map((a) => [a.result, a.details])).toEqual([
      ['success', { left: 9 }],
    ]);
    expect((await auditOf(admin.email, 'login')).at(-1)?.details).toEqual({ mfa: 'recovery code' });

    const sessions = await countRows('sessions', admin.id);
    const token2 = (await passwordStep(admin, address)).json().mfaToken;
    const twice = await verify({ mfaToken: token2, recoveryCode: code }, address);
    expect(twice.statusCode).toBe(401);
    expect(twice.json().message).toBe(MFA_MESSAGES.codeInvalid);
    expect(await countRows('sessions', admin.id)).toBe(sessions);
    const session = used.json() as Session;
    expect((await call('GET', '/api/v2/mfa/status', { token: session.token })).json().recoveryCodesLeft).toBe(
      9,
    );
  });

  it('two exchanges of one challenge sent together give one session', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { secret, recoveryCodes } = await enrol(admin);
    const address = freshAddress();
    const token = (await passwordStep(admin, address)).json().mfaToken;
    const sessions = await countRows('sessions', admin.id);
    const code = await nextCode(secret);
    const answers = await Promise.all([
      verify({ mfaToken: token, code }, address),
      verify({ mfaToken: token, recoveryCode: recoveryCodes[0] as string }, address),
    ]);
    expect(answers.map((a) => a.statusCode).sort()).toEqual([200, 401]);
    expect(await countRows('sessions', admin.id)).toBe(sessions + 1);
    // The loser used nothing: were it the recovery code, it is still unused.
    const usedCodes = await database.db
      .selectFrom('mfa_recovery_codes')
      .select('id')
      .where('user_id', '=', admin.id)
      .where('used_at', 'is not', null)
      .execute();
    expect(usedCodes.length).toBe(answers[1]?.statusCode === 200 ? 1 : 0);
  });

  it('an unknown, expired or voided challenge is refused; a disabled account cannot finish', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { secret } = await enrol(admin);
    const address = freshAddress();
    const unknown = await verify({ mfaToken: 'x'.repeat(43), code: '123456' }, address);
    expect(unknown.statusCode).toBe(401);
    expect(unknown.json()).toMatchObject({
      code: 'MFA_CHALLENGE_EXPIRED',
      message: MFA_MESSAGES.challengeExpired,
    });

    const token = (await passwordStep(admin, address)).json().mfaToken;
    await database.db
      .updateTable('mfa_challenges')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('user_id', '=', admin.id)
      .execute();
    const expired = await verify({ mfaToken: token, code: await nextCode(secret) }, address);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().code).toBe('MFA_CHALLENGE_EXPIRED');

    const sessions = await countRows('sessions', admin.id);
    const token2 = (await passwordStep(admin, address)).json().mfaToken;
    await database.db
      .updateTable('users')
      .set({ userstatus: 'INACTIVE' })
      .where('id', '=', admin.id)
      .execute();
    const disabled = await verify({ mfaToken: token2, code: await nextCode(secret) }, address);
    expect(disabled.statusCode).toBe(403);
    expect(disabled.json().message).toBe(MESSAGES.loginInactive);
    expect(await countRows('sessions', admin.id)).toBe(sessions);
  });

  it('a secret sealed under another key (MFA_SECRET_KEY changed) is a clear 409, not a counted failure', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const { secret } = await enrol(admin);
    await database.db
      .updateTable('user_mfa')
      .set({ secret: sealSecret(randomBytes(32), admin.id, secret) })
      .where('user_id', '=', admin.id)
      .execute();
    const address = freshAddress();
    const token = (await passwordStep(admin, address)).json().mfaToken;
    const refused = await verify({ mfaToken: token, code: await nextCode(secret) }, address);
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(MFA_MESSAGES.unreadable);
    const counted = await database.db
      .selectFrom('login_throttle')
      .select('failures')
      .where('key', '=', `acct-addr:user:${admin.id}|${address}`)
      .executeTakeFirst();
    expect(counted?.failures ?? 0).toBe(0);
  });

  it('bad input gets a clear 400, never a 500', async () => {
    const address = freshAddress();
    for (const payload of [
      {},
      { mfaToken: 'x'.repeat(43) },
      { mfaToken: 'x'.repeat(43), code: '12345' },
      { mfaToken: 'x'.repeat(43), code: 'abcdef' },
      { mfaToken: 'x'.repeat(43), code: '123456', recoveryCode: 'abc' },
      { mfaToken: 'short', code: '123456' },
      { mfaToken: 'x'.repeat(43), code: 123456 },
    ]) {
      const response = await verify(payload, address);
      expect({ payload, status: response.statusCode, code: response.json().code }).toEqual({
        payload,
        status: 400,
        code: 'VALIDATION_FAILED',
      });
    }
    const user = await buildUser(database);
    const { token } = await enrol(user);
    const bad = await call('POST', '/api/v2/mfa/enrol/confirm', { token, payload: { code: '12 34' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain(MFA_MESSAGES.codeFormat);
  });

  describe('reset (User Management)', () => {
    async function signedIn(level: 'ADMIN' | 'SUPERADMIN') {
      const actor = await buildUser(database, { userlevel: level });
      const { token } = await enrol(actor);
      return { actor, token };
    }
    const mfaOf = (userId: number) =>
      database.db.selectFrom('user_mfa').selectAll().where('user_id', '=', userId).execute();

    it('an ADMIN resets a USER: secret and codes go, sessions end, audited; the next sign-in has no step', async () => {
      const { actor, token } = await signedIn('ADMIN');
      const user = await buildUser(database);
      const enrolled = await enrol(user);

      const listed = await call('GET', '/api/v2/mfa/users', { token });
      expect(listed.json().userIds).toEqual(expect.arrayContaining([actor.id, user.id]));

      const reset = await call('POST', '/api/v2/mfa/reset', { token, payload: { email: user.email } });
      expect(reset.statusCode).toBe(200);
      expect(reset.json()).toEqual({ status: 'success', message: MFA_MESSAGES.reset });
      expect(await mfaOf(user.id)).toEqual([]);
      expect(await countRows('mfa_recovery_codes', user.id)).toBe(0);
      expect((await call('GET', '/api/homeData.php', { token: enrolled.token })).statusCode).toBe(401);
      const audit = await auditOf(user.email, 'mfa.reset');
      expect(audit.map((a) => [a.actor, a.result, a.target])).toEqual([[actor.email, 'success', user.email]]);
      expect(audit[0]?.details).toEqual({ sessionsEnded: 1 });
      expect((await passwordStep(user, freshAddress())).json().status).toBe('success');

      const none = await call('POST', '/api/v2/mfa/reset', { token, payload: { email: user.email } });
      expect(none.statusCode).toBe(409);
      expect(none.json().message).toBe(MFA_MESSAGES.notSetUp);
      const unknown = await call('POST', '/api/v2/mfa/reset', {
        token,
        payload: { email: 'no@lendlock.com' },
      });
      expect(unknown.statusCode).toBe(404);
    });

    it('an ADMIN cannot reset a SUPERADMIN or another ADMIN: refused, nothing changed', async () => {
      const { token } = await signedIn('ADMIN');
      for (const level of ['SUPERADMIN', 'ADMIN'] as const) {
        const target = await buildUser(database, { userlevel: level });
        const enrolled = await enrol(target);
        const before = await mfaOf(target.id);
        const refused = await call('POST', '/api/v2/mfa/reset', { token, payload: { email: target.email } });
        expect(refused.statusCode).toBe(403);
        expect(refused.json().message).toBe('An ADMIN can manage USER accounts only.');
        expect(await mfaOf(target.id)).toEqual(before);
        expect(await countRows('mfa_recovery_codes', target.id)).toBe(10);
        expect((await call('GET', '/api/homeData.php', { token: enrolled.token })).statusCode).toBe(200);
        expect((await auditOf(target.email, 'mfa.reset')).map((a) => a.result)).toEqual(['forbidden']);
      }
    });

    it('a SUPERADMIN resets an ADMIN, who must set two-factor up again at the next sign-in', async () => {
      const { token } = await signedIn('SUPERADMIN');
      const admin = await buildUser(database, { userlevel: 'ADMIN' });
      await enrol(admin);
      expect(
        (await call('POST', '/api/v2/mfa/reset', { token, payload: { email: admin.email } })).statusCode,
      ).toBe(200);
      const next = (await passwordStep(admin, freshAddress())).json();
      expect(next).toMatchObject({ status: 'success', mfa_enrolment_required: true });
      expect((await call('GET', '/api/homeData.php', { token: next.token })).statusCode).toBe(403);
    });

    it('a USER cannot reset anyone', async () => {
      const user = await buildUser(database);
      const victim = await buildUser(database);
      await enrol(victim);
      const session = (await passwordStep(user, freshAddress())).json() as Session;
      const refused = await call('POST', '/api/v2/mfa/reset', {
        token: session.token,
        payload: { email: victim.email },
      });
      expect(refused.statusCode).toBe(403);
      expect(refused.json().message).toBe(MESSAGES.unauthorised);
      expect(await countRows('user_mfa', victim.id)).toBe(1);
    });
  });

  describe('lock after MFA_LOCK_AFTER wrong codes in MFA_LOCK_WINDOW (defaults: 20 in 24 hours)', () => {
    /** Time passes for the account and the address, as the database sees it: their windows move back. */
    async function later(userId: number, address: string, ms: number) {
      const by = sql`${ms} * interval '1 millisecond'`;
      await sql`UPDATE login_throttle SET window_start = window_start - ${by}
        WHERE key LIKE ${`%user:${userId}%`} OR key LIKE ${`%${address}`}`.execute(database.db);
      await sql`UPDATE user_mfa SET failures_since = failures_since - ${by}
        WHERE user_id = ${userId}`.execute(database.db);
    }
    const minutes16 = 16 * 60_000;

    /** `n` wrong codes, three at most per throttle window (LOGIN_MAX_FAILURES_PER_ACCOUNT here), over hours. */
    async function guess(user: TestUser, secret: string, address: string, n: number) {
      const answers = [];
      for (let i = 0; i < n; i++) {
        if (i > 0 && i % 3 === 0) await later(user.id, address, minutes16);
        const token = (await passwordStep(user, address)).json().mfaToken;
        answers.push(await verify({ mfaToken: token, code: await wrongCode(secret) }, address));
      }
      return answers;
    }

    const lockMetric = async () =>
      Number(/^lendlock_mfa_locks_total (\d+)$/m.exec((await call('GET', '/metrics')).body)?.[1]);

    it('the 20th wrong code over hours locks the second factor: the right code and a recovery code are refused until a reset', async () => {
      const admin = await buildUser(database, { userlevel: 'ADMIN' });
      const adminSession = await enrol(admin);
      const user = await buildUser(database);
      const { secret, recoveryCodes } = await enrol(user);
      const address = freshAddress();
      const sessions = await countRows('sessions', user.id);
      const locksBefore = await lockMetric();

      // Nineteen wrong codes across seven throttle windows: each refused as wrong, never throttled.
      const answers = await guess(user, secret, address, 19);
      expect(answers.map((a) => a.statusCode)).toEqual(Array(19).fill(401));
      await later(user.id, address, minutes16);
      const token = (await passwordStep(user, address)).json().mfaToken;
      const twentieth = await verify({ mfaToken: token, code: await wrongCode(secret) }, address);
      expect(twentieth.statusCode).toBe(403);
      expect(twentieth.json()).toMatchObject({ code: 'MFA_LOCKED', message: MFA_MESSAGES.locked });

      // Locked: the right code, then a right recovery code, from a new sign-in and another address.
      const elsewhere = freshAddress();
      const again = (await passwordStep(user, elsewhere)).json().mfaToken;
      const right = await verify({ mfaToken: again, code: await nextCode(secret) }, elsewhere);
      expect(right.statusCode).toBe(403);
      expect(right.json()).toMatchObject({ code: 'MFA_LOCKED', message: MFA_MESSAGES.locked });
      const recovery = await verify({ mfaToken: again, recoveryCode: recoveryCodes[0] }, elsewhere);
      expect(recovery.statusCode).toBe(403);
      expect(recovery.json().code).toBe('MFA_LOCKED');
      // Nothing else changed: no session, no recovery code used, the refusals counted no failure.
      expect(await countRows('sessions', user.id)).toBe(sessions);
      expect(await countRows('mfa_recovery_codes', user.id)).toBe(10);
      const unused = await database.db
        .selectFrom('mfa_recovery_codes')
        .select('id')
        .where('user_id', '=', user.id)
        .where('used_at', 'is', null)
        .execute();
      expect(unused).toHaveLength(10);
      expect(
        await database.db
          .selectFrom('login_throttle')
          .select('key')
          .where('key', 'like', `%${elsewhere}`)
          .execute(),
      ).toEqual([]);
      expect((await auditOf(user.email, 'login.mfa')).map((a) => a.result)).toEqual([
        ...Array(20).fill('invalid code'),
        'locked',
        'locked',
      ]);
      const lock = await auditOf(user.email, 'mfa.lock');
      expect(lock.map((a) => [a.actor, a.target, a.result, a.details])).toEqual([
        [user.email, user.email, 'success', { failures: 20, windowMs: 24 * 3_600_000 }],
      ]);
      expect(await lockMetric()).toBe(locksBefore + 1);

      // An administrator's reset clears the lock with the rest: the USER signs in on the password alone,
      // and setting two-factor up again starts with no count.
      const reset = await call('POST', '/api/v2/mfa/reset', {
        token: adminSession.token,
        payload: { email: user.email },
      });
      expect(reset.statusCode).toBe(200);
      expect(await countRows('user_mfa', user.id)).toBe(0);
      const fresh = await enrol(user);
      const next = (await passwordStep(user, elsewhere)).json().mfaToken;
      expect(
        (await verify({ mfaToken: next, code: await nextCode(fresh.secret) }, elsewhere)).statusCode,
      ).toBe(200);
    });

    it('wrong codes older than the window do not count: the count starts again', async () => {
      const user = await buildUser(database);
      const { secret } = await enrol(user);
      const address = freshAddress();
      await guess(user, secret, address, 19);
      // A day and a bit later: the window has passed.
      await later(user.id, address, 24 * 3_600_000 + 60_000);
      const [late] = await guess(user, secret, address, 1);
      expect(late?.statusCode).toBe(401);
      expect(late?.json().code).toBe('INVALID_CREDENTIALS');
      const row = await database.db
        .selectFrom('user_mfa')
        .select(['failures', 'locked_at'])
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow();
      expect(row).toEqual({ failures: 1, locked_at: null });
      const token = (await passwordStep(user, address)).json().mfaToken;
      expect((await verify({ mfaToken: token, code: await nextCode(secret) }, address)).statusCode).toBe(200);
    });
  });
});
