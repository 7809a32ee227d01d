import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';

/** Adds `key` with `value` unless it is there already (a concurrent start keeps the first). */
export async function insertSettingIfAbsent(db: Kysely<DB>, key: string, value: string): Promise<void> {
  await db
    .insertInto('settings')
    .values({ key, value })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
}

export async function readSetting(db: Kysely<DB>, key: string): Promise<string | null> {
  const row = await db.selectFrom('settings').select('value').where('key', '=', key).executeTakeFirst();
  return row?.value ?? null;
}

/** Replaces `key`'s value if it is still `expected`; returns whether it did. */
export async function replaceSetting(
  db: Kysely<DB>,
  key: string,
  expected: string,
  value: string,
): Promise<boolean> {
  const result = await db
    .updateTable('settings')
    .set({ value })
    .where('key', '=', key)
    .where('value', '=', expected)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Every setting, locked for the caller's transaction (the rotation re-seals them all at once). */
export async function lockAllSettings(db: Kysely<DB>): Promise<{ key: string; value: string }[]> {
  return db.selectFrom('settings').select(['key', 'value']).orderBy('key').forUpdate().execute();
}
