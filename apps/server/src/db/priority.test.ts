/**
 * Priority work: the context that marks it, the inbox order, and the reserved database
 * pool that lets it through while every connection of the main pool is taken.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase } from '../../test/db';
import { openDatabase } from './database';
import { currentPriority, inboxOrder, isPriorityWork, PRIORITY_SINGLE, withPriority } from './priority';

describe('priority context', () => {
  it('is batch priority outside, and follows the work it marks across awaits', async () => {
    expect(currentPriority()).toBe(0);
    expect(isPriorityWork()).toBe(false);
    const seen = await withPriority(PRIORITY_SINGLE, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return [currentPriority(), isPriorityWork()];
    });
    expect(seen).toEqual([PRIORITY_SINGLE, true]);
    expect(currentPriority()).toBe(0);
  });
});

describe('inboxOrder', () => {
  type M = { imei: string; name: string; urgent?: boolean };
  const order = (messages: M[]) =>
    inboxOrder(
      messages,
      (m) => m.urgent === true,
      (m) => m.imei,
    ).map((m) => m.name);

  it('applies the messages of devices with a priority acknowledgement first, each in arrival order', () => {
    expect(
      order([
        { imei: 'a', name: 'a1' },
        { imei: 'b', name: 'b1' },
        { imei: 'r', name: 'r-state' },
        { imei: 'a', name: 'a2' },
        { imei: 'r', name: 'r-ack', urgent: true },
        { imei: 'b', name: 'b2' },
      ]),
    ).toEqual(['r-state', 'r-ack', 'a1', 'b1', 'a2', 'b2']);
  });

  it('changes nothing without priority messages, and loses or repeats none', () => {
    const messages = Array.from({ length: 50 }, (_, i) => ({
      imei: String(i % 7),
      name: `m${i}`,
      urgent: i % 11 === 0 && i > 0,
    }));
    const plain = messages.map((m) => ({ ...m, urgent: false }));
    expect(order(plain)).toEqual(plain.map((m) => m.name));
    const ordered = order(messages);
    expect([...ordered].sort()).toEqual(messages.map((m) => m.name).sort());
  });
});

describe.each(databaseKinds().filter((kind) => kind === 'postgres'))('reserved pool (%s)', (kind) => {
  it('runs priority work while every connection of the main pool is held', async () => {
    const template = await openTestDatabase(kind);
    const url = template.location.databaseUrl as string;
    const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1, priorityPoolSize: 1 });
    try {
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      // The main pool's only connection is held in a transaction until the priority query has answered.
      const holder = database.db.transaction().execute(async (trx) => {
        await sql`SELECT 1`.execute(trx);
        await held;
      });
      const answered = await withPriority(PRIORITY_SINGLE, () =>
        sql<{ one: number }>`SELECT 1 AS one`.execute(database.db),
      );
      expect(answered.rows[0]?.one).toBe(1);
      release();
      await holder;
    } finally {
      await database.close();
      await template.close();
    }
  });

  it('takes an idle connection of the main pool while every reserved one is held, rather than wait', async () => {
    const template = await openTestDatabase(kind);
    const url = template.location.databaseUrl as string;
    const database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 1, priorityPoolSize: 1 });
    const backend = (db: typeof database.db) =>
      sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db).then((r) => r.rows[0]?.pid);
    try {
      // The main pool's one connection, opened by batch work and now idle.
      const mainPid = await backend(database.db);
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let reservedPid: number | undefined;
      const holder = withPriority(PRIORITY_SINGLE, () =>
        database.db.transaction().execute(async (trx) => {
          reservedPid = await backend(trx);
          await held;
        }),
      );
      await expect.poll(() => reservedPid).toBeDefined();
      expect(reservedPid).not.toBe(mainPid);
      // The reserve is taken: the next priority query runs on the idle main connection.
      await expect(withPriority(PRIORITY_SINGLE, () => backend(database.db))).resolves.toBe(mainPid);
      release();
      await holder;
      // With the reserve free again, priority work is back on it.
      await expect(withPriority(PRIORITY_SINGLE, () => backend(database.db))).resolves.toBe(reservedPid);
    } finally {
      await database.close();
      await template.close();
    }
  });
});
