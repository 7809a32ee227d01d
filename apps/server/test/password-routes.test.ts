import { KEY_MESSAGES, MESSAGES } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

interface Received {
  to: string;
  raw: string;
}

/** A real SMTP server inside the test process. */
async function startSmtp(): Promise<{ url: string; inbox: Received[]; close(): Promise<void> }> {
  const inbox: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => {
        raw += chunk.toString('utf8');
      });
      stream.on('end', () => {
        inbox.push({ to: session.envelope.rcptTo.map((r) => r.address).join(','), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as { port: number };
  return { url: `smtp://127.0.0.1:${port}`, inbox, close: () => new Promise((r) => server.close(() => r())) };
}

function linkIn(raw: string): string {
  const unfolded = raw.replace(/=\r?\n/g, '');
  const match = /http:\/\/console\.test\/resetPassword\/([A-Za-z0-9_-]+)/.exec(unfolded);
  if (!match?.[1]) throw new Error(`no link in mail: ${raw}`);
  return match[1];
}

describe.each(databaseKinds())('forgot and reset password on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    smtp = await startSmtp();
    app = await buildTestApp(database, { smtpUrl: smtp.url, publicUrl: 'http://console.test' });
  });
  afterAll(async () => {
    await app?.close();
    await smtp?.close();
    await database?.close();
  });

  /** Waits for the `count`-th mail to `to` (mail leaves after the answer) and returns it. */
  const mailTo = (to: string, count = 1) =>
    vi.waitFor(
      () => {
        const mails = smtp.inbox.filter((m) => m.to === to);
        if (mails.length < count) throw new Error(`waiting for mail ${count} to ${to}`);
        return mails[count - 1]?.raw ?? '';
      },
      { timeout: 5000, interval: 20 },
    );
  const forgot = (email: string) =>
    app.inject({ method: 'POST', url: '/api/forgotPassword.php', payload: { email } });
  const reset = (token: string, newPassword: string) =>
    app.inject({ method: 'POST', url: '/api/reset_password.php', payload: { token, newPassword } });

  it('answers the same for known and unknown addresses and never returns the token', async () => {
    const user = await buildUser(database);
    const known = await forgot(user.email);
    const unknown = await forgot('nobody@lendlock.com');
    expect(known.json()).toEqual({ status: 'success', message: MESSAGES.resetLinkSent });
    expect(unknown.json()).toEqual(known.json());
    expect(known.json()).not.toHaveProperty('token');
    await mailTo(user.email);
    expect(smtp.inbox.filter((m) => m.to === 'nobody@lendlock.com')).toHaveLength(0);
  });

  it('answers the same when the mail cannot be sent, and logs the failure instead', async () => {
    const broken = await buildTestApp(database, {
      smtpUrl: 'smtp://127.0.0.1:1',
      publicUrl: 'http://console.test',
    });
    try {
      const user = await buildUser(database);
      const response = await broken.inject({
        method: 'POST',
        url: '/api/forgotPassword.php',
        payload: { email: user.email },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'success', message: MESSAGES.resetLinkSent });
    } finally {
      await broken.close();
    }
  });

  it('limits forgot-password requests per client address without changing the answer', async () => {
    const user = await buildUser(database);
    const remoteAddress = '192.0.2.200';
    for (let i = 0; i < 20; i++) {
      await app.inject({
        method: 'POST',
        url: '/api/forgotPassword.php',
        remoteAddress,
        payload: { email: `n${i}@lendlock.com` },
      });
    }
    const limited = await app.inject({
      method: 'POST',
      url: '/api/forgotPassword.php',
      remoteAddress,
      payload: { email: user.email },
    });
    expect(limited.json()).toEqual({ status: 'success', message: MESSAGES.resetLinkSent });
    const tokens = await database.db
      .selectFrom('password_resets')
      .select('token_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(tokens).toHaveLength(0);
  });

  it('refuses an address that is not an email', async () => {
    const response = await forgot('not-an-email');
    expect(response.statusCode).toBe(400);
    expect(response.json().message).toBe(MESSAGES.forgotEmailRequired);
  });

  it('mails a single-use link whose token is stored hashed; the reset ends every session', async () => {
    const user = await buildUser(database);
    const session = await loginAs(app, user);
    await forgot(user.email);
    const mail = await mailTo(user.email);
    expect(mail).toContain('Subject: Reset your Lendlock password');
    const token = linkIn(mail);
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
    const stored = await database.db
      .selectFrom('password_resets')
      .select('token_hash')
      .where('user_id', '=', user.id)
      .execute();
    expect(stored.map((s) => s.token_hash)).not.toContain(token);

    const ok = await reset(token, 'brand-new-pass');
    expect(ok.json()).toEqual({ status: 'success', message: MESSAGES.passwordResetSuccess });
    expect(
      (await app.inject({ method: 'POST', url: '/api/logout.php', headers: { 'x-api-key': session.token } }))
        .statusCode,
    ).toBe(401);
    expect((await loginAs(app, { email: user.email, password: 'brand-new-pass' })).email).toBe(user.email);
    const old = await app.inject({
      method: 'POST',
      url: '/api/login.php',
      payload: { email: user.email, password: user.password },
    });
    expect(old.statusCode).toBe(401);

    const again = await reset(token, 'another-pass-1');
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toBe(MESSAGES.resetTokenInvalid);
  });

  it('voids an older token when a newer one is sent, and refuses an expired one', async () => {
    const user = await buildUser(database);
    await forgot(user.email);
    const first = linkIn(await mailTo(user.email, 1));
    await forgot(user.email);
    const second = linkIn(await mailTo(user.email, 2));
    expect(second).not.toBe(first);
    expect((await reset(first, 'new-pass-123')).json().message).toBe(MESSAGES.resetTokenInvalid);
    await database.db
      .updateTable('password_resets')
      .set({ expires_at: sql<Date>`now() - interval '1 second'` })
      .where('user_id', '=', user.id)
      .execute();
    expect((await reset(second, 'new-pass-123')).json().message).toBe(MESSAGES.resetTokenInvalid);
  });

  it('expires tokens after 30 minutes', async () => {
    const user = await buildUser(database);
    const before = Date.now();
    await forgot(user.email);
    // The token is made after the answer (forgot.test.ts): wait for it.
    const row = await vi.waitFor(() =>
      database.db
        .selectFrom('password_resets')
        .select('expires_at')
        .where('user_id', '=', user.id)
        .executeTakeFirstOrThrow(),
    );
    const ttl = new Date(row.expires_at).getTime() - before;
    expect(ttl).toBeGreaterThan(29 * 60_000);
    expect(ttl).toBeLessThanOrEqual(30 * 60_000 + 5000);
  });

  it("a password reset switches the user's API keys off; whoever holds the account now cannot switch them on", async () => {
    const user = await buildUser(database, { permissions: ['keyManagement'] });
    const inject = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
      app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
    const session = await loginAs(app, user);
    const { id, key } = (
      await inject(session.token, 'POST', '/keyapi/generate_key.php', {
        key_name: 'held before the reset',
        password: user.password,
      })
    ).json();
    expect((await inject(key, 'GET', '/api/homeData.php')).statusCode).toBe(200);
    const keyRows = () => database.db.selectFrom('api_keys').selectAll().orderBy('id').execute();

    // A refused reset changes no key.
    const untouched = await keyRows();
    expect((await reset('not-a-token', 'brand-new-pass')).statusCode).toBe(400);
    expect(await keyRows()).toEqual(untouched);

    await forgot(user.email);
    expect((await reset(linkIn(await mailTo(user.email)), 'brand-new-pass')).statusCode).toBe(200);
    expect((await inject(key, 'GET', '/api/homeData.php')).statusCode).toBe(401);
    const row = await database.db
      .selectFrom('api_keys')
      .selectAll()
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      status: 'inactive',
      deactivated_by: null,
      deactivated_by_level: 'ADMIN',
      deactivated_reason: 'password reset',
    });
    const audit = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'details'])
      .where('action', '=', 'key.status')
      .where('target', '=', `key:${id}`)
      .execute();
    expect(audit).toEqual([
      expect.objectContaining({
        actor: 'system',
        result: 'success',
        details: expect.objectContaining({ reason: 'password reset', to: 'inactive' }),
      }),
    ]);

    // Whoever reset the password (the owner, or someone who read the owner's mail) cannot switch it on.
    const after = await loginAs(app, { email: user.email, password: 'brand-new-pass' });
    const before = await keyRows();
    const refused = await inject(after.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId: id,
      status: 'active',
    });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(KEY_MESSAGES.reactivationNeeds('ADMIN'));
    expect(await keyRows()).toEqual(before);
    // An ADMIN can, once satisfied.
    const admin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    const ok = await inject(admin.token, 'POST', '/keyapi/keymanagement/update_key_status.php', {
      keyId: id,
      status: 'active',
    });
    expect(ok.statusCode).toBe(200);
    expect((await inject(key, 'GET', '/api/homeData.php')).statusCode).toBe(200);
  });

  it('refuses a missing token, a too-short password and a breached one, changing nothing', async () => {
    expect((await reset('', 'whatever-long')).json().message).toBe(MESSAGES.resetTokenInvalid);
    const user = await buildUser(database);
    const hashBefore = async () =>
      (
        await database.db
          .selectFrom('users')
          .select('password_hash')
          .where('id', '=', user.id)
          .executeTakeFirstOrThrow()
      ).password_hash;
    const before = await hashBefore();
    await forgot(user.email);
    const token = linkIn(await mailTo(user.email));
    const short = await reset(token, 'abcdefghijk');
    expect(short.statusCode).toBe(400);
    expect(short.json().message).toBe('Password must be at least 12 characters');
    // On the list of breached and common passwords, whatever its case.
    const breached = await reset(token, 'IloveYou1234');
    expect(breached.statusCode).toBe(400);
    expect(breached.json().message).toBe(MESSAGES.passwordTooCommon);
    expect(await hashBefore()).toBe(before);
    expect((await reset(token, 'long-enough-now')).statusCode).toBe(200);
  });
});

describe('the outbox without SMTP_URL', () => {
  it('writes the mail as an .eml file in DATA_DIR/outbox', async () => {
    const { mkdtempSync, readdirSync, readFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const database = await openTestDatabase('pglite');
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-outbox-'));
    const app = await buildTestApp(database, { dataDir, publicUrl: 'http://console.test' });
    try {
      const user = await buildUser(database);
      await app.inject({ method: 'POST', url: '/api/forgotPassword.php', payload: { email: user.email } });
      const files = await vi.waitFor(() => {
        const found = readdirSync(join(dataDir, 'outbox'));
        if (found.length === 0) throw new Error('no mail yet');
        return found;
      });
      expect(files).toHaveLength(1);
      const raw = readFileSync(join(dataDir, 'outbox', files[0] ?? ''), 'utf8');
      expect(raw).toContain(`To: ${user.email}`);
      expect(linkIn(raw)).toBeTruthy();
    } finally {
      await app.close();
      await database.close();
    }
  });
});
