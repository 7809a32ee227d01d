import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB } from '../../db/types';

/** Voids the user's open tokens (a newer one replaces them) and stores the new one's hash. */
export async function replaceResetToken(
  trx: Transaction<DB>,
  token: { hash: string; userId: number; expiresAt: Date },
): Promise<void> {
  await trx
    .updateTable('password_resets')
    .set({ used_at: sql<Date>`now()` as unknown as Date, used_reason: 'superseded' })
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
    .set({ used_at: sql<Date>`now()` as unknown as Date, used_reason: 'used' })
    .where('token_hash', '=', hash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', sql<Date>`now()`)
    .returning('user_id')
    .executeTakeFirst();
  return row?.user_id;
}

export async function countRecentResets(db: Kysely<DB>, userId: number, windowMs: number): Promise<number> {
  const row = await db
    .selectFrom('password_resets')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('user_id', '=', userId)
    .where('created_at', '>', sql<Date>`now() - ${windowMs} * interval '1 millisecond'`)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
