/**
 * Sessions and their ending, the sign-in throttle and the networks a user signed in from: what sign-in,
 * re-authentication, two-factor authentication, the account changes and the enrollment limits share.
 */
import { type Kysely, sql } from 'kysely';
import { AppError } from '../../core/errors';
import { inTransaction } from '../../db/transaction';
import type { DB, UserRow } from '../../db/types';

/** The account a signed-in user re-authenticates as: its id and password hash (undefined: gone). */
export async function findCredential(
  db: Kysely<DB>,
  userId: number,
): Promise<Pick<UserRow, 'id' | 'password_hash'> | undefined> {
  return db.selectFrom('users').select(['id', 'password_hash']).where('id', '=', userId).executeTakeFirst();
}

/** The `ended_reason` of a session that ended before its expiry (modules pass these to end them). */
export const SESSION_END = {
  logout: 'logout',
  forcedLogout: 'forced logout',
  disabled: 'disabled',
  levelChanged: 'level changed',
  passwordReset: 'password reset',
  mfaReset: 'mfa reset',
} as const;

/** A session's last use is written at most this often: the idle check allows as much. */
export const SESSION_USE_RECORDED_EVERY_MS = 60_000;

/** Records a session's use, unless it was recorded within the last minute. */
export async function touchSession(db: Kysely<DB>, tokenHash: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ last_used_at: sql<Date>`now()` })
    .where('token_hash', '=', tokenHash)
    .where('last_used_at', '<=', sql<Date>`now() - interval '1 minute'`)
    .execute();
}

/** What is known of a session that no longer authenticates (null: no such token). */
export interface SessionEndRow {
  ended_reason: string | null;
  /** It ended (ended_at) before its expiry. */
  ended_early: boolean;
  expired: boolean;
  /** Unused for the idle timeout (and the minute its last use may lag). */
  idle: boolean;
  userstatus: UserRow['userstatus'];
}

export async function findSessionEnd(
  db: Kysely<DB>,
  tokenHash: string,
  idleTimeoutMs: number,
): Promise<SessionEndRow | null> {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select([
      'sessions.ended_reason',
      'users.userstatus',
      sql<boolean>`sessions.ended_at IS NOT NULL AND sessions.ended_at < sessions.expires_at`.as(
        'ended_early',
      ),
      sql<boolean>`sessions.expires_at <= now()`.as('expired'),
      sql<boolean>`sessions.last_used_at <= now() - ${idleTimeoutMs + SESSION_USE_RECORDED_EVERY_MS} * interval '1 millisecond'`.as(
        'idle',
      ),
    ])
    .where('sessions.token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row ?? null;
}

export async function insertSession(
  db: Kysely<DB>,
  session: { tokenHash: string; userId: number; expiresAt: Date; clientAddress: string },
): Promise<void> {
  await db
    .insertInto('sessions')
    .values({
      token_hash: session.tokenHash,
      user_id: session.userId,
      expires_at: session.expiresAt,
      client_address: session.clientAddress,
    })
    .execute();
}

export async function endSession(db: Kysely<DB>, tokenHash: string, reason: string): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ ended_at: sql<Date>`now()`, ended_reason: reason })
    .where('token_hash', '=', tokenHash)
    .where('ended_at', 'is', null)
    .execute();
}

/** Ends every live session of a user (forced logout, disabling, password reset). Returns how many. */
export async function endUserSessions(db: Kysely<DB>, userId: number, reason: string): Promise<number> {
  const result = await db
    .updateTable('sessions')
    .set({ ended_at: sql<Date>`now()`, ended_reason: reason })
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

// ---- Attempt throttling: attempts per key in a fixed window that opens at the first counted one ----

/** The 429 of a throttled key: `message` gets the minutes left (at least 1), Retry-After the seconds. */
export function throttledError(retryAfterMs: number, message: (minutes: number) => string): AppError {
  return new AppError(429, 'RATE_LIMITED', message(Math.max(1, Math.ceil(retryAfterMs / 60_000))), {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

export interface AttemptLimit {
  key: string;
  max: number;
}

const windowOf = (windowMs: number) => sql<Date>`now() - ${windowMs} * interval '1 millisecond'`;

/**
 * Counts one attempt against every key and admits it only when no key goes over its limit; returns the
 * keys that refused it (none: admitted). The count is made BEFORE the attempt is checked, in one
 * transaction: the upsert takes each key's row lock, so attempts sent together, to any instance, queue
 * on it and each sees the others' counts; N of them at once are at most `max` checked. A refused attempt
 * is taken back before the locks are released (refused attempts never count). Keys are locked in sorted
 * order, so two attempts sharing keys cannot deadlock.
 */
export async function reserveAttempt(
  db: Kysely<DB>,
  limits: AttemptLimit[],
  windowMs: number,
): Promise<{ key: string; retryAfterMs: number }[]> {
  if (limits.length === 0) return [];
  const keys = [...new Set(limits.map((l) => l.key))].sort();
  return inTransaction(db, async (trx) => {
    // `now()` is this transaction's start: one that waited for another's row may find a window that
    // opened after it started, so the time left is capped at the window (never '16 minutes' of 15).
    const expired = sql`login_throttle.window_start <= ${windowOf(windowMs)}`;
    const { rows } = await sql<{ key: string; failures: number; retry_after_ms: number }>`
      INSERT INTO login_throttle (key, window_start, failures)
      VALUES ${sql.join(keys.map((key) => sql`(${key}, now(), 1)`))}
      ON CONFLICT (key) DO UPDATE SET
        failures = CASE WHEN ${expired} THEN 1 ELSE login_throttle.failures + 1 END,
        window_start = CASE WHEN ${expired} THEN now() ELSE login_throttle.window_start END
      RETURNING key, failures, least(${windowMs}::float8, greatest(0, 1000 * extract(epoch from
        (window_start + ${windowMs} * interval '1 millisecond' - now()))))::float8
        AS retry_after_ms`.execute(trx);
    const blocked = rows.flatMap((row) => {
      const max = Math.min(...limits.filter((l) => l.key === row.key).map((l) => l.max));
      return row.failures > max ? [{ key: row.key, retryAfterMs: Number(row.retry_after_ms) }] : [];
    });
    if (blocked.length > 0) await refundAttempt(trx, keys, windowMs);
    return blocked;
  });
}

/**
 * Takes back one counted attempt of each key (refused, or not a failure after all). A key left at 0 is
 * removed, so an attempt that does not count leaves no trace.
 */
export async function refundAttempt(db: Kysely<DB>, keys: string[], windowMs: number): Promise<void> {
  if (keys.length === 0) return;
  await db
    .updateTable('login_throttle')
    .set({ failures: sql<number>`greatest(failures - 1, 0)` })
    .where('key', 'in', keys)
    .where('window_start', '>', windowOf(windowMs))
    .execute();
  await db.deleteFrom('login_throttle').where('key', 'in', keys).where('failures', '<=', 0).execute();
}

export async function clearAttempts(db: Kysely<DB>, keys: string[]): Promise<void> {
  if (keys.length > 0) await db.deleteFrom('login_throttle').where('key', 'in', keys).execute();
}

// ---- Known networks (ADR 0008): where a user signed in from, hashed with the user id ----

/** Whether the user signed in from this network within `maxAgeMs`. One statement whether or not the
 * user exists (pass 0 for none), so the lookup tells nothing about the account. */
export async function isKnownNetwork(
  db: Kysely<DB>,
  userId: number,
  networkHash: string,
  maxAgeMs: number,
): Promise<boolean> {
  const row = await db
    .selectFrom('login_known_networks')
    .select('user_id')
    .where('user_id', '=', userId)
    .where('network_hash', '=', networkHash)
    .where('last_seen_at', '>', sql<Date>`now() - ${maxAgeMs} * interval '1 millisecond'`)
    .executeTakeFirst();
  return row !== undefined;
}

export async function rememberNetwork(db: Kysely<DB>, userId: number, networkHash: string): Promise<void> {
  await db
    .insertInto('login_known_networks')
    .values({ user_id: userId, network_hash: networkHash })
    .onConflict((oc) =>
      oc.columns(['user_id', 'network_hash']).doUpdateSet({ last_seen_at: sql<Date>`now()` }),
    )
    .execute();
}
