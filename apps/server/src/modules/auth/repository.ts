import type { UserLevel } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import { precompiled } from '../../db/precompiled';
import type { DB } from '../../db/types';
import { sha256Hex } from '../../lib/secrets';
import type { Principal } from '../../plugins/auth';
import { AppError } from '../../plugins/errors';

interface PrincipalRow {
  user_id: number;
  email: string;
  userlevel: UserLevel;
  retailer_phone: string | null;
  permissions: string[] | null;
}

const permissionNames = sql<string[] | null>`(
  SELECT array_agg(p.permission_name ORDER BY p.id)
  FROM user_permissions up JOIN permissions p ON p.id = up.permission_id
  WHERE up.user_id = users.id
)`;

function toPrincipal(
  row: PrincipalRow,
  extra: Pick<Principal, 'credential' | 'sessionTokenHash' | 'keyId'>,
): Principal {
  return {
    ...extra,
    userId: row.user_id,
    email: row.email,
    userlevel: row.userlevel,
    permissions: new Set(row.permissions ?? []),
    retailerPhone: row.retailer_phone,
  };
}

/** A live session (not ended, not expired) of an ACTIVE user. */
const principalBySession = precompiled((db, tokenHash: string) =>
  db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['users.id as user_id', 'users.email', 'users.userlevel', 'users.retailer_phone'])
    .select(permissionNames.as('permissions'))
    .where('sessions.token_hash', '=', tokenHash)
    .where('sessions.ended_at', 'is', null)
    .where('sessions.expires_at', '>', sql<Date>`now()`)
    .where('users.userstatus', '=', 'ACTIVE'),
);

export async function findPrincipalBySession(db: Kysely<DB>, token: string): Promise<Principal | null> {
  const tokenHash = sha256Hex(token);
  const [row] = await principalBySession(db, tokenHash);
  return row ? toPrincipal(row, { credential: 'session', sessionTokenHash: tokenHash }) : null;
}

/** An active integrator key of an ACTIVE user; the key acts with its owner's rights. */
const principalByKey = precompiled((db, keyHash: string) =>
  db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.id', 'api_keys.user_id')
    .select([
      'api_keys.id as key_id',
      'users.id as user_id',
      'users.email',
      'users.userlevel',
      'users.retailer_phone',
    ])
    .select(permissionNames.as('permissions'))
    .where('api_keys.key_hash', '=', keyHash)
    .where('api_keys.status', '=', 'active')
    .where('users.userstatus', '=', 'ACTIVE'),
);

export async function findPrincipalByKey(db: Kysely<DB>, key: string): Promise<Principal | null> {
  const [row] = await principalByKey(db, sha256Hex(key));
  return row ? toPrincipal(row, { credential: 'key', keyId: row.key_id }) : null;
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

// ---- Login throttling: failures per key in a fixed window that opens at the first failure ----

/** The 429 of a throttled key: `message` gets the minutes left (at least 1), Retry-After the seconds. */
export function throttledError(retryAfterMs: number, message: (minutes: number) => string): AppError {
  return new AppError(429, 'RATE_LIMITED', message(Math.max(1, Math.ceil(retryAfterMs / 60_000))), {
    'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1000))),
  });
}

export async function throttledKeys(
  db: Kysely<DB>,
  limits: { key: string; max: number }[],
  windowMs: number,
): Promise<{ key: string; retryAfterMs: number }[]> {
  if (limits.length === 0) return [];
  const rows = await db
    .selectFrom('login_throttle')
    .select([
      'key',
      'failures',
      sql<number>`greatest(0, extract(epoch from (window_start + ${windowMs} * interval '1 millisecond' - now())) * 1000)::float8`.as(
        'retry_after_ms',
      ),
    ])
    .where(
      'key',
      'in',
      limits.map((l) => l.key),
    )
    .where('window_start', '>', sql<Date>`now() - ${windowMs} * interval '1 millisecond'`)
    .execute();
  return rows.flatMap((row) => {
    const limit = limits.find((l) => l.key === row.key);
    return limit && row.failures >= limit.max
      ? [{ key: row.key, retryAfterMs: Number(row.retry_after_ms) }]
      : [];
  });
}

export async function recordFailures(db: Kysely<DB>, keys: string[], windowMs: number): Promise<void> {
  for (const key of keys) {
    await sql`
      INSERT INTO login_throttle (key, window_start, failures) VALUES (${key}, now(), 1)
      ON CONFLICT (key) DO UPDATE SET
        failures = CASE WHEN login_throttle.window_start <= now() - ${windowMs} * interval '1 millisecond'
                        THEN 1 ELSE login_throttle.failures + 1 END,
        window_start = CASE WHEN login_throttle.window_start <= now() - ${windowMs} * interval '1 millisecond'
                            THEN now() ELSE login_throttle.window_start END
    `.execute(db);
  }
}

export async function clearFailures(db: Kysely<DB>, keys: string[]): Promise<void> {
  if (keys.length > 0) await db.deleteFrom('login_throttle').where('key', 'in', keys).execute();
}
