/**
 * Two instances never deadlock: the payment watchers of two servers, each on its own
 * connection pool to one PostgreSQL database, polling as fast as they can while 3,000 payments arrive in
 * batches of 100 (an upload). Deadlocks are counted as PostgreSQL counts them (pg_stat_database.deadlocks
 * of the test database) and as the watchers see them (error 40P01): none. Every payment is looked at: the
 * cursor ends at the last one. PostgreSQL only: PGlite has one connection, so nothing can deadlock there.
 */
import { DEFAULT_COLLECTIONS_POLICY } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../src/db/database';
import { CollectionsEngine } from '../src/modules/collections/engine';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp } from './factories';

const LOANS = 3_000;
const BATCH = 100;

describe.skipIf(!databaseKinds().includes('postgres'))('two payment watchers on postgres', () => {
  let database: TestDatabase;
  let second: Database;
  const apps: FastifyInstance[] = [];

  beforeAll(async () => {
    database = await openTestDatabase('postgres');
    second = await openDatabase({
      databaseUrl: database.location.databaseUrl as string,
      dataDir: '',
      poolSize: 5,
    });
    for (const db of [database, { ...second, location: database.location }])
      apps.push(await buildTestApp(db, { collectionsWorkers: false }));
    const policy = { ...DEFAULT_COLLECTIONS_POLICY, enabled: true, unlockOnPayment: true, release: 'AUTO' };
    await sql`INSERT INTO collection_policies (version, policy, created_by)
      VALUES (1, ${JSON.stringify(policy)}::jsonb, 'test')`.execute(database.db);
    await sql`INSERT INTO loans (loan_ref, imei, customer_name, currency)
      SELECT 'W-' || i, (350000000000000 + i)::text, 'Customer ' || i, 'INR' FROM generate_series(1, ${LOANS}) i`.execute(
      database.db,
    );
    await sql`INSERT INTO loan_instalments (loan_id, seq, due_date, amount_minor)
      SELECT id, 1, '2026-03-01', 100000 FROM loans`.execute(database.db);
  });
  afterAll(async () => {
    for (const app of apps) await app.close();
    await second?.close();
    await database?.close();
  });

  const deadlocks = async () => {
    const { rows } = await sql<{ n: string }>`SELECT deadlocks::text AS n FROM pg_stat_database
      WHERE datname = current_database()`.execute(database.db);
    return Number(rows[0]?.n ?? 0);
  };

  it('watch 3,000 payments together with no deadlock, and every payment is looked at', async () => {
    const engines = apps.map(
      (app, i) =>
        new CollectionsEngine({
          db: i === 0 ? database.db : second.db,
          commands: app.ctx.commands,
          log: app.log,
          events: app.ctx.webhookDelivery,
          oneShotTtlMs: 3_600_000,
          instanceId: `instance-${i}`,
        }),
    );
    const before = await deadlocks();
    const errors: { code?: string; message: string }[] = [];
    let uploading = true;
    // Every payment is looked at: after the upload, the watchers go on until the cursor has reached the
    // last payment (a barrier, not a number of rounds that a slow machine would not finish), at most 200.
    const caughtUp = async () =>
      (
        await sql<{ done: boolean }>`SELECT (SELECT payment_cursor FROM collection_payment_watch)
          = (SELECT max(id) FROM loan_payments) AS done`.execute(database.db)
      ).rows[0]?.done === true;
    const watch = async (engine: CollectionsEngine) => {
      let passes = 0;
      while (uploading || passes < 3 || (passes < 200 && !(await caughtUp()))) {
        try {
          await engine.watchPayments();
        } catch (error) {
          errors.push(error as { code?: string; message: string });
        }
        if (!uploading) passes++;
      }
    };
    const watchers = engines.map(watch);
    for (let from = 1; from <= LOANS; from += BATCH) {
      await sql`INSERT INTO loan_payments (loan_id, payment_ref, amount_minor, paid_at)
        SELECT id, 'PW-' || id, 100000, now() FROM loans
        WHERE id IN (SELECT id FROM loans ORDER BY id OFFSET ${from - 1} LIMIT ${BATCH})`.execute(
        database.db,
      );
    }
    uploading = false;
    await Promise.all(watchers);

    expect(errors.map((e) => `${e.code ?? ''} ${e.message}`)).toEqual([]);
    // The statistics collector reports a backend's counts when its transaction ends: read after both stop.
    await sql`SELECT pg_stat_clear_snapshot()`.execute(database.db);
    expect((await deadlocks()) - before).toBe(0);
    const { rows } = await sql<{ cursor: string; last: string }>`SELECT
      (SELECT payment_cursor::text FROM collection_payment_watch) AS cursor,
      (SELECT max(id)::text FROM loan_payments) AS last`.execute(database.db);
    expect(rows[0]?.cursor).toBe(rows[0]?.last);
  });
});
