/**
 * Migrations that move data: a database left by an earlier version, brought up to date by the same
 * `migrate` the server runs at start.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, migrate } from '../src/db/database';
import { sha256Hex } from '../src/lib/secrets';
import { databaseKinds, openEmptyTestDatabase } from './db';

describe.each(databaseKinds())('migration 0009 (batch chunks) on %s', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openEmptyTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('moves the unprocessed rows of batches under way into chunks, and keeps the processed ones', async () => {
    const { db } = database;
    // The schema as 0008 left it: batch rows inserted at upload, a partial index of the unprocessed ones.
    await migrate(db, '0008_lean_command_indexes');
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

    expect((await migrate(db, '0009_batch_chunks')).at(-1)).toBe('0009_batch_chunks');

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

describe.each(databaseKinds())('migration 0010 (device identity) on %s', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openEmptyTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('keeps one holder per IMEI (audited), and moves the generated enrollment secret in as a hash', async () => {
    const { db } = database;
    await migrate(db, '0009_batch_chunks');
    // A holds B's imei1 as its imei2; C and D share an imei2 (C registered first); E repeats its own imei.
    await sql`INSERT INTO devices (imei1, imei2, created_at) VALUES
      ('100000000000001', '100000000000002', '2026-01-01'),
      ('100000000000002', NULL, '2026-01-02'),
      ('100000000000003', '100000000000009', '2026-01-03'),
      ('100000000000004', '100000000000009', '2026-01-04'),
      ('100000000000005', '100000000000005', '2026-01-05'),
      ('100000000000006', '100000000000007', '2026-01-06')`.execute(db);
    await sql`INSERT INTO settings (key, value) VALUES ('enrollment_secret', 'the-old-generated-secret')`.execute(
      db,
    );

    expect((await migrate(db, '0010_device_identity')).at(-1)).toBe('0010_device_identity');

    const devices = await db.selectFrom('devices').select(['imei1', 'imei2']).orderBy('imei1').execute();
    expect(devices).toEqual([
      { imei1: '100000000000001', imei2: null },
      { imei1: '100000000000002', imei2: null },
      { imei1: '100000000000003', imei2: '100000000000009' },
      { imei1: '100000000000004', imei2: null },
      { imei1: '100000000000005', imei2: null },
      { imei1: '100000000000006', imei2: '100000000000007' },
    ]);
    const cleared = await db
      .selectFrom('audit_log')
      .select(['target', 'details'])
      .where('action', '=', 'device.imei2.cleared')
      .orderBy('target')
      .execute();
    expect(cleared.map((c) => [c.target, (c.details as { imei2: string }).imei2])).toEqual([
      ['100000000000001', '100000000000002'],
      ['100000000000004', '100000000000009'],
      ['100000000000005', '100000000000005'],
    ]);
    const held = await db.selectFrom('device_imeis').select(['imei', 'device']).orderBy('imei').execute();
    expect(held).toHaveLength(8);
    expect(held).toContainEqual({ imei: '100000000000009', device: '100000000000003' });
    // The trigger keeps the table in step from now on.
    await sql`UPDATE devices SET imei2 = '100000000000008' WHERE imei1 = '100000000000006'`.execute(db);
    const six = await db
      .selectFrom('device_imeis')
      .select('imei')
      .where('device', '=', '100000000000006')
      .orderBy('imei')
      .execute();
    expect(six.map((r) => r.imei)).toEqual(['100000000000006', '100000000000008']);
    await expect(
      sql`UPDATE devices SET imei2 = '100000000000009' WHERE imei1 = '100000000000006'`.execute(db),
    ).rejects.toThrow();

    const secrets = await db.selectFrom('enrollment_secrets').selectAll().execute();
    expect(secrets.map((r) => [r.name, r.secret_hash])).toEqual([
      ['default', sha256Hex('the-old-generated-secret')],
    ]);
    expect(
      await db.selectFrom('settings').select('key').where('key', '=', 'enrollment_secret').execute(),
    ).toEqual([]);
  });
});

describe.each(databaseKinds())('migration 0026 (one Set Wallpaper grant) on %s', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openEmptyTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('gives setWallpaper to whoever held batch, drops batch, and takes from USERs what opens nothing for one', async () => {
    const { db } = database;
    await migrate(db, '0021_webhooks');
    // Earlier versions seeded `batch` as a permission of its own.
    await sql`INSERT INTO permissions (permission_name) VALUES ('batch')`.execute(db);
    const user = async (email: string, userlevel: 'USER' | 'ADMIN', grants: string[]) => {
      const { id } = await db
        .insertInto('users')
        .values({ email, phone: null, password_hash: 'x', userlevel })
        .returning('id')
        .executeTakeFirstOrThrow();
      await sql`INSERT INTO user_permissions (user_id, permission_id)
        SELECT ${id}::int, id FROM permissions WHERE permission_name = ANY(${grants}::text[])`.execute(db);
      return id;
    };
    const batchOnly = await user('a@lendlock.com', 'USER', ['batch']);
    const both = await user('b@lendlock.com', 'USER', ['batch', 'setWallpaper', 'reports']);
    const useless = await user('c@lendlock.com', 'USER', ['userManagement', 'deviceAction', 'lockDevice']);
    const admin = await user('d@lendlock.com', 'ADMIN', ['userManagement', 'batch']);

    expect(await migrate(db, '0026_one_wallpaper_grant')).toContain('0026_one_wallpaper_grant');

    const held = async (id: number) =>
      (
        await sql<{ name: string }>`SELECT p.permission_name AS name FROM user_permissions up
          JOIN permissions p ON p.id = up.permission_id WHERE up.user_id = ${id} ORDER BY 1`.execute(db)
      ).rows.map((r) => r.name);
    expect(await held(batchOnly)).toEqual(['setWallpaper']);
    expect(await held(both)).toEqual(['reports', 'setWallpaper']);
    expect(await held(useless)).toEqual(['lockDevice']);
    expect(await held(admin)).toEqual(['setWallpaper', 'userManagement']);
    const left = await sql<{ n: number }>`
      SELECT count(*)::int AS n FROM permissions WHERE permission_name = 'batch'`.execute(db);
    expect(Number(left.rows[0]?.n)).toBe(0);
  });
});

describe.each(databaseKinds())('migration 0029 (who decided the desired state) on %s', (kind) => {
  let database: Database;
  beforeAll(async () => {
    database = await openEmptyTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('gives each device the cause of the latest command standing on each key, not the reconcile’s', async () => {
    const { db } = database;
    await migrate(db, '0027_offline_since');
    const device = (imei: string) =>
      sql`INSERT INTO devices (imei1, desired_state) VALUES (${imei}, '{"locked": true}')`.execute(db);
    const command = (imei: string, c: { command: string; iface: string; label: string; status: string }) =>
      sql`INSERT INTO commands (transaction_id, imei1, command, kind, state_key, interface, status, user_label)
        VALUES (${`${imei}-${c.command}-${c.iface}-${c.label}-${c.status}`}, ${imei}, ${c.command}, 'state', 'locked',
          ${c.iface}, ${c.status}, ${c.label})`.execute(db);
    // Locked by collections, formatted, re-locked by the reconcile: collections' lock.
    await device('350000000000011');
    await command('350000000000011', {
      command: 'LOCK',
      iface: 'C',
      label: 'collections v1',
      status: 'EXECUTED',
    });
    await command('350000000000011', { command: 'LOCK', iface: 'S', label: 'system', status: 'SENT' });
    // Locked by collections, then by an operator (an unlock of collections' that failed stands for nothing).
    await device('350000000000029');
    await command('350000000000029', {
      command: 'LOCK',
      iface: 'C',
      label: 'collections v1',
      status: 'EXECUTED',
    });
    await command('350000000000029', {
      command: 'LOCK',
      iface: 'A',
      label: 'ops@lender.in',
      status: 'EXECUTED',
    });
    await command('350000000000029', {
      command: 'UNLOCK',
      iface: 'C',
      label: 'collections v1',
      status: 'FAILED',
    });
    // No command at all.
    await device('350000000000037');

    expect(await migrate(db, '0029_desired_cause')).toContain('0029_desired_cause');

    const causes = await sql<{ imei1: string; cause: string | null; decided: boolean | null }>`
      SELECT d.imei1, d.desired_cause -> 'locked' ->> 'cause' AS cause,
        (d.desired_cause -> 'locked' ->> 'at')::timestamptz = (
          SELECT c.created_at FROM commands c WHERE c.imei1 = d.imei1 AND c.status = 'EXECUTED'
          ORDER BY c.id DESC LIMIT 1) AS decided
      FROM devices d ORDER BY d.imei1`.execute(db);
    expect(causes.rows).toEqual([
      { imei1: '350000000000011', cause: 'collections', decided: true },
      { imei1: '350000000000029', cause: 'operator', decided: true },
      { imei1: '350000000000037', cause: null, decided: null },
    ]);
    const commands = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM commands WHERE cause IS NOT NULL`.execute(db);
    expect(Number(commands.rows[0]?.n)).toBe(0);
  });
});
