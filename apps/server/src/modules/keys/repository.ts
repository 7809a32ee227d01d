import type { KeyDeactivationReason, UserLevel } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { KeyScope } from '../../authz/resources/keys';
import type { DB } from '../../db/types';

export interface KeyListRow {
  id: number;
  key_name: string;
  status: 'active' | 'inactive';
  created_at: Date;
  user_id: number;
  owner_email: string;
  owner_level: UserLevel;
  owner_retailer_phone: string | null;
  last_used_at: Date | null;
  deactivated_at: Date | null;
  deactivated_by_email: string | null;
  deactivated_by_level: UserLevel | null;
  deactivated_reason: KeyDeactivationReason | null;
}

function keysQuery(db: Kysely<DB>) {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .leftJoin('users as deactivator', 'deactivator.id', 'api_keys.deactivated_by')
    .select([
      'api_keys.id',
      'api_keys.key_name',
      'api_keys.status',
      'api_keys.created_at',
      'api_keys.user_id',
      'api_keys.last_used_at',
      'api_keys.deactivated_at',
      'api_keys.deactivated_by_level',
      'api_keys.deactivated_reason',
      'deactivator.email as deactivated_by_email',
      'users.email as owner_email',
      'users.userlevel as owner_level',
      'users.retailer_phone as owner_retailer_phone',
    ]);
}

/**
 * The keys of `scope` in id order: of its retailer's owners (every owner when it names none), of
 * `ownerId` when given, else of every owner whose level is in `ownerLevels`.
 */
export async function listKeys(db: Kysely<DB>, scope: KeyScope): Promise<KeyListRow[]> {
  let query = keysQuery(db).orderBy('api_keys.id');
  if (scope.retailerPhone !== null) query = query.where('users.retailer_phone', '=', scope.retailerPhone);
  return scope.ownerId !== null
    ? query.where('api_keys.user_id', '=', scope.ownerId).execute()
    : query.where('users.userlevel', 'in', scope.ownerLevels).execute();
}

/** The key, its row locked until the transaction ends, so two status changes apply one after the other. */
export async function lockKey(trx: Transaction<DB>, id: number): Promise<KeyListRow | undefined> {
  return keysQuery(trx).where('api_keys.id', '=', id).forUpdate('api_keys').executeTakeFirst();
}

/** Every key of a user, locked like `lockKey`. */
export async function lockKeysOf(trx: Transaction<DB>, userId: number): Promise<KeyListRow[]> {
  return keysQuery(trx)
    .where('api_keys.user_id', '=', userId)
    .orderBy('api_keys.id')
    .forUpdate('api_keys')
    .execute();
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

export interface Deactivation {
  /** Who switched the key off; null for the system (a password reset). */
  by: number | null;
  /** The lowest level that may switch it on again. */
  level: UserLevel;
  reason: KeyDeactivationReason;
}

/** Switches a key on, forgetting why it was off. */
export async function activateKey(trx: Transaction<DB>, id: number): Promise<void> {
  await trx
    .updateTable('api_keys')
    .set({
      status: 'active',
      deactivated_at: null,
      deactivated_by: null,
      deactivated_by_level: null,
      deactivated_reason: null,
    })
    .where('id', '=', id)
    .execute();
}

/** Records `deactivation` on the keys `ids`, switching them off. */
export async function deactivateKeys(
  trx: Transaction<DB>,
  ids: readonly number[],
  deactivation: Deactivation,
): Promise<void> {
  if (ids.length === 0) return;
  await trx
    .updateTable('api_keys')
    .set({
      status: 'inactive',
      deactivated_at: sql<Date>`now()`,
      deactivated_by: deactivation.by,
      deactivated_by_level: deactivation.level,
      deactivated_reason: deactivation.reason,
    })
    .where('id', 'in', ids)
    .execute();
}

/** Records a key's use, at most once a minute per key (no write on every call). */
export async function touchKey(db: Kysely<DB>, id: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where((eb) =>
      eb.or([
        eb('last_used_at', 'is', null),
        eb('last_used_at', '<', sql<Date>`now() - interval '1 minute'`),
      ]),
    )
    .execute();
}
