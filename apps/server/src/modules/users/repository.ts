import type { Permission } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { TenantScope } from '../../authz/tenancy';
import type { DB, NewUser, UserRow } from '../../db/types';

/** Finds a user by what was typed at sign-in: a 10-digit phone or an email (case-insensitive). */
export async function findUserByIdentifier(db: Kysely<DB>, identifier: string): Promise<UserRow | undefined> {
  const value = identifier.trim();
  const query = db.selectFrom('users').selectAll();
  return /^\d{10}$/.test(value)
    ? query.where('phone', '=', value).executeTakeFirst()
    : query.where(sql`lower(email)`, '=', value.toLowerCase()).executeTakeFirst();
}

export async function countUsers(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select(sql<number>`count(*)::int`.as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertUser(trx: Transaction<DB> | Kysely<DB>, user: NewUser): Promise<number> {
  const row = await trx.insertInto('users').values(user).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

export async function setUserPermissions(
  trx: Transaction<DB>,
  userId: number,
  permissionIds: number[],
): Promise<void> {
  await trx.deleteFrom('user_permissions').where('user_id', '=', userId).execute();
  if (permissionIds.length > 0) {
    await trx
      .insertInto('user_permissions')
      .values(permissionIds.map((permission_id) => ({ user_id: userId, permission_id })))
      .execute();
  }
}

export async function listPermissions(db: Kysely<DB>): Promise<Permission[]> {
  return db.selectFrom('permissions').select(['id', 'permission_name']).orderBy('id').execute();
}

export async function permissionsOfUser(db: Kysely<DB>, userId: number): Promise<Permission[]> {
  return db
    .selectFrom('user_permissions')
    .innerJoin('permissions', 'permissions.id', 'user_permissions.permission_id')
    .select(['permissions.id', 'permissions.permission_name'])
    .where('user_permissions.user_id', '=', userId)
    .orderBy('permissions.id')
    .execute();
}

export async function existsEmailOrPhone(
  db: Kysely<DB>,
  email: string,
  phone: string | null,
): Promise<{ email: boolean; phone: boolean }> {
  const rows = await db
    .selectFrom('users')
    .select(['email', 'phone'])
    .where((eb) =>
      eb.or([eb(sql`lower(email)`, '=', email.toLowerCase()), ...(phone ? [eb('phone', '=', phone)] : [])]),
    )
    .execute();
  return {
    email: rows.some((r) => r.email.toLowerCase() === email.toLowerCase()),
    phone: phone !== null && rows.some((r) => r.phone === phone),
  };
}

export interface UserListRow {
  id: number;
  email: string;
  phone: string | null;
  userlevel: UserRow['userlevel'];
  userstatus: UserRow['userstatus'];
  retailer_phone: string | null;
  created_at: Date;
  permission_ids: number[] | null;
  permission_names: string[] | null;
  live_sessions: number;
}

/**
 * The users of `scope` (a retailer's, or every user when it names none) with permissions and whether a
 * live session exists (login status is derived, never stale).
 */
export async function listUsers(db: Kysely<DB>, scope: TenantScope): Promise<UserListRow[]> {
  let query = db.selectFrom('users');
  if (scope.retailerPhone !== null) query = query.where('retailer_phone', '=', scope.retailerPhone);
  return query
    .select(['id', 'email', 'phone', 'userlevel', 'userstatus', 'retailer_phone', 'created_at'])
    .select([
      sql<
        number[] | null
      >`(SELECT array_agg(up.permission_id ORDER BY up.permission_id) FROM user_permissions up WHERE up.user_id = users.id)`.as(
        'permission_ids',
      ),
      sql<
        string[] | null
      >`(SELECT array_agg(p.permission_name ORDER BY p.id) FROM user_permissions up JOIN permissions p ON p.id = up.permission_id WHERE up.user_id = users.id)`.as(
        'permission_names',
      ),
      sql<number>`(SELECT count(*)::int FROM sessions s WHERE s.user_id = users.id AND s.ended_at IS NULL AND s.expires_at > now())`.as(
        'live_sessions',
      ),
    ])
    .orderBy('id')
    .execute();
}

export async function findUserById(db: Kysely<DB>, id: number): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findUserByEmail(db: Kysely<DB>, email: string): Promise<UserRow | undefined> {
  return db
    .selectFrom('users')
    .selectAll()
    .where(sql`lower(email)`, '=', email.trim().toLowerCase())
    .executeTakeFirst();
}

/** Locks the user row for the rest of the transaction (callers must pass a Transaction). */
export async function lockUser(trx: Transaction<DB>, id: number): Promise<UserRow | undefined> {
  return trx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function updateUserRow(
  trx: Transaction<DB> | Kysely<DB>,
  id: number,
  values: Partial<Pick<UserRow, 'phone' | 'userlevel' | 'userstatus' | 'password_hash' | 'retailer_phone'>>,
): Promise<void> {
  await trx
    .updateTable('users')
    .set({ ...values, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .execute();
}

/** Active SUPERADMINs other than `exceptId`, counted under a lock so two requests cannot both pass. */
export async function countOtherActiveSuperadmins(trx: Transaction<DB>, exceptId: number): Promise<number> {
  const rows = await trx
    .selectFrom('users')
    .select('id')
    .where('userlevel', '=', 'SUPERADMIN')
    .where('userstatus', '=', 'ACTIVE')
    .where('id', '!=', exceptId)
    .forUpdate()
    .execute();
  return rows.length;
}

export async function phoneTakenByOther(db: Kysely<DB>, phone: string, userId: number): Promise<boolean> {
  const row = await db
    .selectFrom('users')
    .select('id')
    .where('phone', '=', phone)
    .where('id', '!=', userId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Takes the first start's lock until the transaction ends: simultaneous starts create the first users once. */
export async function lockBootstrap(trx: Transaction<DB>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(7466001)`.execute(trx);
}
