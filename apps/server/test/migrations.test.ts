/**
 * Migrations that move data: a database left by an earlier version, brought up to date by the same
 * `migrate` the server runs at start.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/database';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';

describe.each(databaseKinds())('migrations on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('0009 moves the unprocessed rows of batches under way into chunks, and keeps the processed ones', async () => {
    const { db } = database;
    // The schema as 0008 left it: batch rows inserted at upload, a partial index of the unprocessed ones.
    await sql`DROP TABLE batch_chunks`.execute(db);
    await sql`CREATE INDEX batch_items_todo ON batch_items (batch_id, seq) WHERE result IS NULL`.execute(db);
    await sql`DELETE FROM schema_migrations WHERE name = '0009_batch_chunks'`.execute(db);
    const batch = await db
      .insertInto('batches')
      .values({ feature: 'notifyfiles', command: 'NOTIFY', user_label: 'a@b.c', total: 1203, valid: 1203 })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(batch.id);
    // Rows 1–100 processed; 101–1203 not (one without Notify columns).
    await sql`
      INSERT INTO batch_items (batch_id, seq, imei, name, amount, date, template, header, message, result, transaction_id)
      SELECT ${id}::bigint, g, (350000000000000 + g)::text, 'Name ' || g, (g * 10)::text, '2026-11-21', 'Due',
             'Header ' || g, CASE WHEN g = 700 THEN NULL ELSE 'Message ' || g END,
             CASE WHEN g <= 100 THEN 'found' END, CASE WHEN g <= 100 THEN 'tid-' || g END
      FROM generate_series(1, 1203) g`.execute(db);

    expect(await migrate(db)).toEqual(['0009_batch_chunks']);

    const chunks = await sql<{
      first_seq: number;
      seqs: number[];
      imeis: string[];
      messages: (string | null)[];
    }>`
      SELECT first_seq, seqs, imeis, messages FROM batch_chunks WHERE batch_id = ${id} ORDER BY first_seq`.execute(
      db,
    );
    expect(chunks.rows.map((c) => [c.first_seq, c.seqs.length])).toEqual([
      [101, 400],
      [501, 500],
      [1001, 203],
    ]);
    const seqs = chunks.rows.flatMap((c) => c.seqs);
    expect(seqs).toEqual(Array.from({ length: 1103 }, (_, i) => 101 + i));
    expect(chunks.rows[1]?.imeis[0]).toBe('350000000000501');
    expect(chunks.rows[1]?.messages[199]).toBeNull();
    expect(chunks.rows[1]?.messages[200]).toBe('Message 701');
    const items = await sql<{ n: number; found: number }>`
      SELECT count(*)::int AS n, count(*) FILTER (WHERE result = 'found')::int AS found
      FROM batch_items WHERE batch_id = ${id}`.execute(db);
    expect(items.rows[0]).toEqual({ n: 100, found: 100 });
    const index = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_indexes WHERE indexname = 'batch_items_todo'`.execute(db);
    expect(index.rows[0]?.n).toBe(0);
  });
});
