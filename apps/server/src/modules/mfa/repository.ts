/**
 * Queries of two-factor authentication (migration 0013). Every "use once" rule is one conditional
 * UPDATE, so two requests sent together cannot both use the same code, recovery code or challenge.
 */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { TenantScope } from '../../authz/tenancy';
import { precompiled } from '../../db/precompiled';
import type { DB } from '../../db/types';

export interface MfaRow {
  user_id: number;
  secret: string;
  confirmed_at: Date | null;
  last_used_step: number | null;
  /** Set when too many wrong codes fell within the lock window: no code passes until a reset. */
  locked_at: Date | null;
}

export async function findMfa(db: Kysely<DB>, userId: number): Promise<MfaRow | undefined> {
  return db
    .selectFrom('user_mfa')
    .select(['user_id', 'secret', 'confirmed_at', 'last_used_step', 'locked_at'])
    .where('user_id', '=', userId)
    .executeTakeFirst();
}

/** Run on every request of a session whose level requires MFA: precompiled, one primary-key probe. */
const confirmedMfa = precompiled((db, userId: number) =>
  db
    .selectFrom('user_mfa')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null),
);

export async function hasConfirmedMfa(db: Kysely<DB>, userId: number): Promise<boolean> {
  return (await confirmedMfa(db, userId)).length > 0;
}

/** A new pending enrolment replaces a pending one; an account whose MFA is on keeps it (returns false). */
export async function savePendingSecret(db: Kysely<DB>, userId: number, sealed: string): Promise<boolean> {
  const row = await db
    .insertInto('user_mfa')
    .values({ user_id: userId, secret: sealed })
    .onConflict((oc) =>
      oc
        .column('user_id')
        .doUpdateSet({ secret: sealed, last_used_step: null })
        .where('user_mfa.confirmed_at', 'is', null),
    )
    .returning('user_id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Turns MFA on if it was pending with this very secret; false when another request got there first. */
export async function confirmPending(
  trx: Transaction<DB>,
  userId: number,
  sealed: string,
  step: number,
): Promise<boolean> {
  const result = await trx
    .updateTable('user_mfa')
    .set({ confirmed_at: sql<Date>`now()`, last_used_step: step })
    .where('user_id', '=', userId)
    .where('secret', '=', sealed)
    .where('confirmed_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Records that the code of `step` was used; false when it (or a later one) already was: a replay. */
export async function useTimeStep(db: Kysely<DB>, userId: number, step: number): Promise<boolean> {
  const result = await db
    .updateTable('user_mfa')
    .set({ last_used_step: step })
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null)
    .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Counts a wrong code of the account in its lock window (one that opened `windowMs` or more ago starts
 * again at this code) and locks its second factor when the count reaches `lockAfter`. One conditional
 * UPDATE each: codes checked together all count, and only one of them locks. Returns the count and
 * whether this code locked it.
 */
export async function countWrongCode(
  trx: Transaction<DB>,
  userId: number,
  lockAfter: number,
  windowMs: number,
): Promise<{ failures: number; locked: boolean }> {
  const expired = sql<boolean>`failures_since IS NULL OR failures_since <= now() - ${windowMs} * interval '1 millisecond'`;
  const row = await trx
    .updateTable('user_mfa')
    .set({
      failures: sql<number>`CASE WHEN ${expired} THEN 1 ELSE failures + 1 END`,
      failures_since: sql<Date>`CASE WHEN ${expired} THEN now() ELSE failures_since END`,
    })
    .where('user_id', '=', userId)
    .where('confirmed_at', 'is not', null)
    .returning('failures')
    .executeTakeFirst();
  const failures = row?.failures ?? 0;
  if (failures < lockAfter) return { failures, locked: false };
  const locked = await trx
    .updateTable('user_mfa')
    .set({ locked_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('locked_at', 'is', null)
    .executeTakeFirst();
  return { failures, locked: Number(locked.numUpdatedRows) === 1 };
}

export async function replaceRecoveryCodes(
  trx: Transaction<DB>,
  userId: number,
  codeHashes: string[],
): Promise<void> {
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  await trx
    .insertInto('mfa_recovery_codes')
    .values(codeHashes.map((code_hash) => ({ user_id: userId, code_hash })))
    .execute();
}

/** Uses one unused recovery code; false when there is no such code or it was used already. */
export async function useRecoveryCode(db: Kysely<DB>, userId: number, codeHash: string): Promise<boolean> {
  const result = await db
    .updateTable('mfa_recovery_codes')
    .set({ used_at: sql<Date>`now()` })
    .where('user_id', '=', userId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function countUnusedRecoveryCodes(db: Kysely<DB>, userId: number): Promise<number> {
  const row = await db
    .selectFrom('mfa_recovery_codes')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertChallenge(
  db: Kysely<DB>,
  challenge: { tokenHash: string; userId: number; client: 'console' | 'superadmin'; ttlMs: number },
): Promise<void> {
  await db
    .insertInto('mfa_challenges')
    .values({
      token_hash: challenge.tokenHash,
      user_id: challenge.userId,
      client: challenge.client,
      expires_at: sql<Date>`now() + ${challenge.ttlMs} * interval '1 millisecond'`,
    })
    .execute();
  // Spent and expired challenges of the account are of no further use.
  await db
    .deleteFrom('mfa_challenges')
    .where('user_id', '=', challenge.userId)
    .where((eb) => eb.or([eb('used_at', 'is not', null), eb('expires_at', '<=', sql<Date>`now()`)]))
    .execute();
}

/** A live challenge: not used, not expired. */
export async function findLiveChallenge(
  db: Kysely<DB>,
  tokenHash: string,
): Promise<{ user_id: number; client: 'console' | 'superadmin' } | undefined> {
  return db
    .selectFrom('mfa_challenges')
    .select(['user_id', 'client'])
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
}

/** Uses the challenge; false when it was used meanwhile or expired. */
export async function useChallenge(db: Kysely<DB>, tokenHash: string): Promise<boolean> {
  const result = await db
    .updateTable('mfa_challenges')
    .set({ used_at: sql<Date>`now()` })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Removes an account's MFA: secret, recovery codes and open challenges. Returns whether it had any. */
export async function deleteMfa(trx: Transaction<DB>, userId: number): Promise<boolean> {
  const removed = await trx.deleteFrom('user_mfa').where('user_id', '=', userId).executeTakeFirst();
  await trx.deleteFrom('mfa_recovery_codes').where('user_id', '=', userId).execute();
  await trx.deleteFrom('mfa_challenges').where('user_id', '=', userId).execute();
  return Number(removed.numDeletedRows) > 0;
}

/** The accounts whose MFA is on (User Management shows it). */
/** The accounts of `scope` (a retailer's, or every one when it names none) whose MFA is on. */
export async function listConfirmedUserIds(db: Kysely<DB>, scope: TenantScope): Promise<number[]> {
  let query = db
    .selectFrom('user_mfa')
    .innerJoin('users', 'users.id', 'user_mfa.user_id')
    .select('user_mfa.user_id')
    .where('user_mfa.confirmed_at', 'is not', null);
  if (scope.retailerPhone !== null) query = query.where('users.retailer_phone', '=', scope.retailerPhone);
  const rows = await query.orderBy('user_mfa.user_id').execute();
  return rows.map((r) => r.user_id);
}
