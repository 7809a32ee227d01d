/** Who a credential is: a live session's or an active integrator key's principal. */
import type { UserLevel } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import type { Principal } from '../../core/principal';
import { precompiled } from '../../db/precompiled';
import type { DB } from '../../db/types';
import { sha256Hex } from '../../lib/secrets';
import { SESSION_USE_RECORDED_EVERY_MS, touchSession } from '../sessions/repository';

interface PrincipalRow {
  user_id: number;
  email: string;
  userlevel: UserLevel;
  retailer_phone: string | null;
  permissions: string[] | null;
  stale?: boolean;
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

/**
 * A live session (not ended, not expired, used within `idleMs` plus the minute its last use may lag) of
 * an ACTIVE user; `stale` when its last use was recorded a minute ago or more.
 */
const principalBySession = precompiled((db, tokenHash: string, idleMs: number) =>
  db
    .selectFrom('sessions')
    .innerJoin('users', 'users.id', 'sessions.user_id')
    .select(['users.id as user_id', 'users.email', 'users.userlevel', 'users.retailer_phone'])
    .select(permissionNames.as('permissions'))
    .select(sql<boolean>`sessions.last_used_at <= now() - interval '1 minute'`.as('stale'))
    .where('sessions.token_hash', '=', tokenHash)
    .where('sessions.ended_at', 'is', null)
    .where('sessions.expires_at', '>', sql<Date>`now()`)
    .where('sessions.last_used_at', '>', sql<Date>`now() - ${idleMs} * interval '1 millisecond'`)
    .where('users.userstatus', '=', 'ACTIVE'),
);

/**
 * The principal of a live session, whose use it records: at most once a minute per session (one
 * conditional UPDATE), so the hot path mostly only reads. The idle check allows that minute: a session
 * lives at least `idleTimeoutMs` after its last request, at most a minute more.
 */
export async function findPrincipalBySession(
  db: Kysely<DB>,
  token: string,
  idleTimeoutMs: number,
): Promise<Principal | null> {
  const tokenHash = sha256Hex(token);
  const [row] = await principalBySession(db, tokenHash, idleTimeoutMs + SESSION_USE_RECORDED_EVERY_MS);
  if (!row) return null;
  if (row.stale) await touchSession(db, tokenHash);
  return toPrincipal(row, { credential: 'session', sessionTokenHash: tokenHash });
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
