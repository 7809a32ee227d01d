import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types';

export interface KeyListRow {
  id: number;
  key_name: string;
  status: 'active' | 'inactive';
  created_at: Date;
  user_id: number;
  owner_email: string;
  owner_level: 'USER' | 'ADMIN' | 'SUPERADMIN';
  last_used_at: Date | null;
}

function keysQuery(db: Kysely<DB>) {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select([
      'api_keys.id',
      'api_keys.key_name',
      'api_keys.status',
      'api_keys.created_at',
      'api_keys.user_id',
      'api_keys.last_used_at',
      'users.email as owner_email',
      'users.userlevel as owner_level',
    ]);
}

export async function listKeys(db: Kysely<DB>, ownerId?: number): Promise<KeyListRow[]> {
  let query = keysQuery(db).orderBy('api_keys.id');
  if (ownerId !== undefined) query = query.where('api_keys.user_id', '=', ownerId);
  return query.execute();
}

export async function findKey(
  trx: Transaction<DB> | Kysely<DB>,
  id: number,
): Promise<KeyListRow | undefined> {
  return keysQuery(trx).where('api_keys.id', '=', id).executeTakeFirst();
}

export async function insertKey(
  db: Kysely<DB>,
  key: { name: string; hash: string; userId: number },
): Promise<number> {
  const row = await db
    .insertInto('api_keys')
    .values({ key_name: key.name, key_hash: key.hash, user_id: key.userId })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

export async function setKeyStatus(
  trx: Transaction<DB> | Kysely<DB>,
  id: number,
  status: 'active' | 'inactive',
) {
  await trx.updateTable('api_keys').set({ status }).where('id', '=', id).execute();
}

/** Records a key's use, at most once a minute per key (no write on every call). */
export async function touchKey(db: Kysely<DB>, id: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql<Date>`now()` as unknown as Date })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('last_used_at', 'is', null),
        eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`),
      ]),
    )
    .execute();
}
