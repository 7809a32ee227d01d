import { sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types';

/**
 * Voids the user's open tokens (a newer one replaces them) and stores the new one's hash. Requests for
 * one user are serialised (a transaction-scoped advisory lock): two at once would otherwise each void
 * what they see and both insert, leaving two open tokens.
 */
export async function replaceResetToken(
  trx: Transaction<DB>,
  token: { hash: string; userId: number; expiresAt: Date },
): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtext('password_resets'), ${token.userId}::int)`.execute(trx);
  await trx
    .updateTable('password_resets')
    .set({ used_at: sql<Date>`now()`, used_reason: 'superseded' })
    .where('user_id', '=', token.userId)
    .where('used_at', 'is', null)
    .execute();
  await trx
    .insertInto('password_resets')
    .values({ token_hash: token.hash, user_id: token.userId, expires_at: token.expiresAt })
    .execute();
}

/** Marks an open, unexpired token used and returns its user; undefined when there is none. */
export async function consumeResetToken(trx: Transaction<DB>, hash: string): Promise<number | undefined> {
  const row = await trx
    .updateTable('password_resets')
    .set({ used_at: sql<Date>`now()`, used_reason: 'used' })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}
