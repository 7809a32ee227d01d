/**
 * The mail outbox (ADR 0008): a reset mail survives a mail server that is down (and a restart of the
 * instance meanwhile) and arrives once the server is back; a mail refused for good or past its deadline
 * is given up where operators see it (an error log line, `lendlock_mail_failed_total`); two instances
 * never send one mail twice.
 */
import { freePort } from '@lendlock/testkit';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app';
import type { Config } from '../src/config';
import { seal } from '../src/lib/sealed';
import { isPermanentMailError, retryDelayMs, UNOPENED_BODY } from '../src/modules/mail/outbox';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildUser } from './factories';

interface Received {
  to: string;
  raw: string;
}

/** A real SMTP server in the test process; `refuse` makes it answer RCPT TO with a permanent 550. */
async function startSmtp(port = 0, refuse = false) {
  const inbox: Received[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    onRcptTo(_address, _session, callback) {
      if (!refuse) return callback();
      const error = new Error('5.1.1 No such mailbox here') as Error & { responseCode: number };
      error.responseCode = 550;
      callback(error);
    },
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
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', () => resolve()));
  const bound = (server.server.address() as { port: number }).port;
  return {
    url: `smtp://127.0.0.1:${bound}`,
    inbox,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** An app whose log lines (JSON) are kept in `lines`. */
async function startApp(database: TestDatabase, overrides: Partial<Config>) {
  const lines: { level: number; msg: string; [key: string]: unknown }[] = [];
  const app = await buildApp({
    config: buildConfig({ publicUrl: 'http://console.test', ...overrides }),
    database,
    deviceChannel: false,
    logger: { level: 'info', stream: { write: (line: string) => lines.push(JSON.parse(line)) } },
  });
  await app.ready();
  return { app, lines };
}

const linkIn = (raw: string) =>
  /http:\/\/console\.test\/resetPassword\/([A-Za-z0-9_-]+)/.exec(raw.replace(/=\r?\n/g, ''))?.[1];

async function metric(app: FastifyInstance, name: string): Promise<number> {
  const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line ? Number(line.split(' ').pop()) : 0;
}

describe('retry schedule', () => {
  it('waits 1, 2, 4, … minutes, at most an hour', () => {
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map((n) => retryDelayMs(n) / 60_000)).toEqual([
      1, 2, 4, 8, 16, 32, 60, 60, 60,
    ]);
  });
  it('gives up at once only on a permanent refusal', () => {
    expect(isPermanentMailError({ responseCode: 550 })).toBe(true);
    expect(isPermanentMailError({ responseCode: 421 })).toBe(false);
    expect(isPermanentMailError({ responseCode: 503 })).toBe(false);
    expect(isPermanentMailError({ responseCode: 535, code: 'EAUTH' })).toBe(false);
    expect(isPermanentMailError(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET' }))).toBe(
      false,
    );
  });
});

describe.each(databaseKinds())('the mail outbox on %s', (kind) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(async () => {
    await database?.close();
  });

  const outboxRow = (to: string) =>
    database.db
      .selectFrom('mail_outbox')
      .selectAll()
      .select(sql<number>`extract(epoch from next_attempt_at - now())::float8`.as('due_in_s'))
      .where('recipient', '=', to)
      .executeTakeFirstOrThrow();
  /** Time passes: the mail's next attempt is due now. */
  const makeDue = (to: string) =>
    database.db
      .updateTable('mail_outbox')
      .set({ next_attempt_at: sql<Date>`now()` })
      .where('recipient', '=', to)
      .execute();

  it('gives up a body that does not open with the secrets key, and still sends one an older version wrote plain', async () => {
    const smtp = await startSmtp();
    const { app, lines } = await startApp(database, { smtpUrl: smtp.url });
    const sealedElsewhere = await buildUser(database);
    const plain = await buildUser(database);
    try {
      // A mail sealed under another secrets key (SECRETS_KEY changed while it waited).
      await database.db
        .insertInto('mail_outbox')
        .values({
          kind: 'password_reset',
          recipient: sealedElsewhere.email,
          subject: 'Reset',
          body: seal(Buffer.alloc(32, 9), `mail_outbox:password_reset:${sealedElsewhere.email}`, 'x'),
          give_up_at: new Date(Date.now() + 3_600_000),
        })
        .execute();
      await database.db
        .insertInto('mail_outbox')
        .values({
          kind: 'password_reset',
          recipient: plain.email,
          subject: 'Reset',
          body: 'written plain by an older version',
          give_up_at: new Date(Date.now() + 3_600_000),
        })
        .execute();
      await app.ctx.mail.runOnce();
      const given = await outboxRow(sealedElsewhere.email);
      expect(given.failed_at).not.toBeNull();
      expect(given.last_error).toBe(UNOPENED_BODY);
      expect(given.body).toBeNull();
      expect(lines.some((l) => l.level === 50 && l.msg === `mail given up: ${UNOPENED_BODY}`)).toBe(true);
      expect(smtp.inbox.map((m) => m.to)).toEqual([plain.email]);
      expect(smtp.inbox[0]?.raw).toContain('written plain by an older version');
    } finally {
      await app.close();
      await smtp.close();
    }
  });

  it('keeps a reset mail while the server is down, across a restart, and delivers it when back', async () => {
    const port = await freePort();
    const down = await startApp(database, { smtpUrl: `smtp://127.0.0.1:${port}` });
    const user = await buildUser(database);
    let smtp: Awaited<ReturnType<typeof startSmtp>> | undefined;
    try {
      const answer = await down.app.inject({
        method: 'POST',
        url: '/api/forgotPassword.php',
        payload: { email: user.email },
      });
      expect(answer.statusCode).toBe(200);
      // The first attempt fails (connection refused) and the mail waits a minute for the next one.
      const failed = await vi.waitFor(async () => {
        const row = await outboxRow(user.email);
        if (row.attempts < 1 || row.last_error === null) throw new Error('not attempted yet');
        return row;
      });
      expect(failed).toMatchObject({ kind: 'password_reset', sent_at: null, failed_at: null });
      // While it waits, a reader of the database finds no link in it: the body is sealed.
      expect(failed.body).toMatch(/^v1:/);
      expect(failed.body).not.toMatch(/resetPassword|console\.test/);
      expect(JSON.stringify(await database.db.selectFrom('mail_outbox').selectAll().execute())).not.toMatch(
        /resetPassword/,
      );
      expect(failed.due_in_s).toBeGreaterThan(50);
      expect(failed.due_in_s).toBeLessThanOrEqual(60);
      expect(failed.last_error).toMatch(/ECONNREFUSED/);
      expect(down.lines.some((l) => l.level === 40 && l.msg === 'mail not sent; will retry')).toBe(true);
      expect(await metric(down.app, 'lendlock_mail_outbox_pending')).toBe(1);
      expect(await metric(down.app, 'lendlock_mail_failed_total')).toBe(0);
    } finally {
      await down.app.close();
    }

    // The mail server comes back; so does the instance, a minute later.
    smtp = await startSmtp(port);
    const up = await startApp(database, { smtpUrl: smtp.url });
    try {
      await makeDue(user.email);
      await up.app.ctx.mail.runOnce();
      const mails = smtp.inbox.filter((m) => m.to === user.email);
      expect(mails).toHaveLength(1);
      const token = linkIn(mails[0]?.raw ?? '');
      expect(token).toBeTruthy();
      const sent = await outboxRow(user.email);
      expect(sent.sent_at).not.toBeNull();
      expect(sent.attempts).toBe(2);
      // The link no longer sits in the database once it has left.
      expect(sent.body).toBeNull();
      expect(await metric(up.app, 'lendlock_mail_outbox_pending')).toBe(0);
      // And the link works as ever.
      const reset = await up.app.inject({
        method: 'POST',
        url: '/api/reset_password.php',
        payload: { token, newPassword: 'after-the-outage' },
      });
      expect(reset.statusCode).toBe(200);
    } finally {
      await up.app.close();
      await smtp.close();
    }
  });

  it('gives up a mail refused for good: an error log line and lendlock_mail_failed_total', async () => {
    const smtp = await startSmtp(0, true);
    const { app, lines } = await startApp(database, { smtpUrl: smtp.url });
    try {
      const user = await buildUser(database);
      await app.inject({ method: 'POST', url: '/api/forgotPassword.php', payload: { email: user.email } });
      const row = await vi.waitFor(async () => {
        const found = await outboxRow(user.email);
        if (found.failed_at === null) throw new Error('not given up yet');
        return found;
      });
      expect(row).toMatchObject({ attempts: 1, sent_at: null, body: null });
      expect(row.last_error).toMatch(/550/);
      const logged = lines.find((l) => l.msg === 'mail refused by the mail server; given up');
      expect(logged).toMatchObject({ level: 50, kind: 'password_reset', to: user.email, attempts: 1 });
      expect(await metric(app, 'lendlock_mail_failed_total{kind="password_reset"}')).toBe(1);
      expect(await metric(app, 'lendlock_mail_outbox_pending')).toBe(0);
      expect(smtp.inbox).toHaveLength(0);
    } finally {
      await app.close();
      await smtp.close();
    }
  });

  it('gives up a reset mail still unsent when its link expires, and says so', async () => {
    const port = await freePort();
    const { app, lines } = await startApp(database, { smtpUrl: `smtp://127.0.0.1:${port}` });
    try {
      const user = await buildUser(database);
      await app.inject({ method: 'POST', url: '/api/forgotPassword.php', payload: { email: user.email } });
      await vi.waitFor(async () => {
        if ((await outboxRow(user.email)).last_error === null) throw new Error('not attempted yet');
      });
      // Half an hour later: the link has expired, and so has the mail's reason to exist.
      await database.db
        .updateTable('mail_outbox')
        .set({ give_up_at: sql<Date>`now() - interval '1 second'`, next_attempt_at: sql<Date>`now()` })
        .where('recipient', '=', user.email)
        .execute();
      await app.ctx.mail.runOnce();
      const row = await outboxRow(user.email);
      expect(row.failed_at).not.toBeNull();
      expect(row.body).toBeNull();
      expect(row.last_error).toMatch(/ECONNREFUSED/);
      const logged = lines.find((l) => l.msg === 'mail could not be sent before its deadline; given up');
      expect(logged).toMatchObject({ level: 50, kind: 'password_reset', to: user.email });
      expect(await metric(app, 'lendlock_mail_failed_total{kind="password_reset"}')).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('two instances working the queue at once send each mail once', async () => {
    const smtp = await startSmtp();
    const one = await startApp(database, { smtpUrl: smtp.url });
    const two = await startApp(database, { smtpUrl: smtp.url });
    try {
      // A dozen mails become visible at once (one transaction), as after an outage.
      const recipients = Array.from({ length: 12 }, (_, i) => `queued-${i}-${kind}@lendlock.com`);
      await database.db.transaction().execute(async (trx) => {
        for (const to of recipients)
          await one.app.ctx.mail.enqueue(trx, { kind: 'test', to, subject: 'Queued', text: to });
      });
      await Promise.all([one.app.ctx.mail.runOnce(), two.app.ctx.mail.runOnce()]);
      await vi.waitFor(() => expect(smtp.inbox.length).toBeGreaterThanOrEqual(recipients.length));
      expect(smtp.inbox.map((m) => m.to).sort()).toEqual([...recipients].sort());
    } finally {
      await one.app.close();
      await two.app.close();
      await smtp.close();
    }
  });
});
