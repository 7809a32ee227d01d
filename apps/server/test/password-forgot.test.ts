/**
 * Forgot password tells nothing about the account, by structure rather than by a stopwatch: the answer
 * leaves before the account is even looked up, after the same database statements for a known and an
 * unknown address; the account's work (token, mail) happens after it. And requests sent together cannot
 * bomb a mailbox past the limit.
 */
import { MESSAGES } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildApp } from '../src/app';
import { MAX_RESET_MAILS } from '../src/modules/password/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildUser } from './factories';

/** While `gate` is set, the account lookup of a forgot-password request waits for it. */
const lookup = vi.hoisted(() => ({ gate: undefined as Promise<void> | undefined }));
vi.mock('../src/modules/users/repository', async (original) => {
  const real = await original<typeof import('../src/modules/users/repository')>();
  return {
    ...real,
    findUserByEmail: async (...args: Parameters<typeof real.findUserByEmail>) => {
      await lookup.gate;
      return real.findUserByEmail(...args);
    },
  };
});

describe.each(databaseKinds())('forgot password on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  /** Every statement the app issues, in order (SQL text, without values). */
  const issued: string[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    const executor = database.db.getExecutor();
    const recorder: KyselyPlugin = {
      transformQuery(args) {
        issued.push(executor.compileQuery(args.node, args.queryId).sql);
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    // Nothing else issues statements meanwhile: no device channel nor batch workers, and the outbox
    // worker stopped (mail stays queued, which is all these tests look at).
    app = await buildApp({
      config: buildConfig(),
      database: { ...database, db: database.db.withPlugin(recorder) },
      deviceChannel: false,
      logger: false,
    });
    await app.ready();
    await app.ctx.mail.stop();
  });
  afterAll(async () => {
    lookup.gate = undefined;
    await app?.close();
    await database?.close();
  });

  const forgot = (email: string, remoteAddress: string) =>
    app.inject({ method: 'POST', url: '/api/forgotPassword.php', remoteAddress, payload: { email } });
  /** The answer to one request, and the statements issued from its arrival to its answer. */
  const observed = async (email: string, remoteAddress: string) => {
    issued.length = 0;
    const answer = await forgot(email, remoteAddress);
    return { answer, statements: [...issued] };
  };

  it('answers before the account is looked up, after the same statements for known and unknown', async () => {
    const user = await buildUser(database);
    let open = () => {};
    lookup.gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    try {
      // Both answers arrive while the account lookup is held: the answer cannot depend on it.
      const known = await observed(user.email, '192.0.2.10');
      const unknown = await observed('nobody-here@lendlock.com', '192.0.2.11');
      expect(known.answer.statusCode).toBe(200);
      expect(known.answer.json()).toEqual({ status: 'success', message: MESSAGES.resetLinkSent });
      expect(unknown.answer.json()).toEqual(known.answer.json());

      // Before the answer both ran exactly the same statements: the client address's limit, no more.
      expect(known.statements).toEqual(unknown.statements);
      expect(known.statements).toHaveLength(1);
      expect(known.statements[0]).toMatch(/insert into login_throttle/i);

      // No token and no mail exist yet.
      const tokens = () =>
        database.db.selectFrom('password_resets').select('user_id').where('user_id', '=', user.id).execute();
      const mails = () =>
        database.db.selectFrom('mail_outbox').select('id').where('recipient', '=', user.email).execute();
      expect(await tokens()).toHaveLength(0);
      expect(await mails()).toHaveLength(0);

      // Released, the work after the answer makes the token and queues its mail.
      open();
      await vi.waitFor(async () => expect(await mails()).toHaveLength(1));
      expect(await tokens()).toHaveLength(1);
      expect(
        await database.db
          .selectFrom('mail_outbox')
          .select('id')
          .where('recipient', '=', 'nobody-here@lendlock.com')
          .execute(),
      ).toHaveLength(0);
    } finally {
      lookup.gate = undefined;
      open();
    }
  });

  it(`queues at most ${MAX_RESET_MAILS} reset mails per account for 20 requests at once`, async () => {
    const user = await buildUser(database);
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => forgot(user.email, `198.51.100.${i + 1}`)),
    );
    for (const answer of answers)
      expect(answer.json()).toEqual({ status: 'success', message: MESSAGES.resetLinkSent });
    // Every request is audited once its work is done.
    const audited = () =>
      database.db
        .selectFrom('audit_log')
        .select('result')
        .where('actor', '=', user.email)
        .where('action', '=', 'password.forgot')
        .execute();
    await vi.waitFor(async () => expect(await audited()).toHaveLength(20), { timeout: 10_000 });
    const results = (await audited()).map((r) => r.result);
    expect(results.filter((r) => r === 'mail queued')).toHaveLength(MAX_RESET_MAILS);
    expect(results.filter((r) => r === 'throttled')).toHaveLength(20 - MAX_RESET_MAILS);
    const mails = await database.db
      .selectFrom('mail_outbox')
      .select('id')
      .where('recipient', '=', user.email)
      .execute();
    expect(mails).toHaveLength(MAX_RESET_MAILS);
    // One token is open: each newer one voided the one before.
    const open = await database.db
      .selectFrom('password_resets')
      .select('user_id')
      .where('user_id', '=', user.id)
      .where('used_at', 'is', null)
      .execute();
    expect(open).toHaveLength(1);
  });
});
