/**
 * The device row is written twice per command (its desired state when the command is recorded, its
 * reported state and `last_seen_at` when the device acknowledges). PostgreSQL makes such an update HOT (no
 * new entry in any index) only when no indexed column changes, whether or not the row is in a partial
 * index. An index that names one of these columns, in its keys or its predicate, turns every command into
 * a write to every index of `devices`: 0021's `devices (last_seen_at) WHERE NOT online` halved the speed
 * of a 100,000-IMEI batch (bench/batch.ts) until 0027 moved it to `offline_since`.
 */

import { INITIAL_DEVICE_STATE } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setOnlineMany, setReportedStates } from '../src/modules/devices/repository';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';

/** What a command and its acknowledgement write on the device row. */
const WRITTEN_PER_COMMAND = [
  'desired_state',
  'last_command',
  'last_command_at',
  'reported_state',
  'last_seen_at',
];

describe.each(databaseKinds())('device updates stay HOT on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('no index of devices names a column that every command or acknowledgement writes', async () => {
    const { rows } = await sql<{ name: string; definition: string }>`
      SELECT c.relname AS name, pg_get_indexdef(i.indexrelid) AS definition
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
      WHERE i.indrelid = 'devices'::regclass`.execute(database.db);
    expect(rows.length).toBeGreaterThan(2);
    const offending = rows.filter((r) =>
      WRITTEN_PER_COMMAND.some((column) => new RegExp(`\\b${column}\\b`).test(r.definition)),
    );
    expect(offending).toEqual([]);
    // The offline sweep still has its index, on the column written only when a device goes offline.
    expect(rows.map((r) => r.definition).join('\n')).toMatch(/devices_offline_since ON .*\(offline_since\)/);
  });

  it('offline_since is set when a device goes offline, kept while it stays offline, cleared when it is back', async () => {
    const { db } = database;
    await sql`INSERT INTO devices (imei1, claimstatus, online) VALUES ('356938035643809', 'ENROLLED', true)`.execute(
      db,
    );
    const offlineSince = async () =>
      (
        await sql<{ offline_since: Date | null }>`
          SELECT offline_since FROM devices WHERE imei1 = '356938035643809'`.execute(db)
      ).rows[0]?.offline_since ?? null;
    await setOnlineMany(db, new Map([['356938035643809', true]]));
    expect(await offlineSince()).toBeNull();
    await setOnlineMany(db, new Map([['356938035643809', false]]));
    const first = await offlineSince();
    expect(first).toBeInstanceOf(Date);
    await setOnlineMany(db, new Map([['356938035643809', false]]));
    expect(await offlineSince()).toEqual(first);
    await setOnlineMany(db, new Map([['356938035643809', true]]));
    expect(await offlineSince()).toBeNull();
  });

  it('an acknowledged state on an online device is a HOT update', async () => {
    const { db } = database;
    await sql`INSERT INTO devices (imei1, claimstatus, online) VALUES ('490154203237518', 'ENROLLED', true)`.execute(
      db,
    );
    const hot = await db.transaction().execute(async (trx) => {
      const read = async () => {
        const { rows } = await sql<{ updated: string | number; hot: string | number }>`
          SELECT n_tup_upd AS updated, n_tup_hot_upd AS hot FROM pg_stat_xact_user_tables
          WHERE relname = 'devices'`.execute(trx);
        return { updated: Number(rows[0]?.updated ?? 0), hot: Number(rows[0]?.hot ?? 0) };
      };
      const before = await read();
      await setReportedStates(
        trx,
        new Map([
          ['490154203237518', { state: { ...INITIAL_DEVICE_STATE, locked: true }, appversion: null }],
        ]),
        new Set(),
        INITIAL_DEVICE_STATE,
      );
      const after = await read();
      return { updated: after.updated - before.updated, hot: after.hot - before.hot };
    });
    expect(hot).toEqual({ updated: 1, hot: 1 });
  });
});
