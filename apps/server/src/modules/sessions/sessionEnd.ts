/**
 * Why a console session stopped working, for the 401 `plugins/auth.ts` answers with it (asked
 * through auth/service.ts `Authenticator`).
 */
import type { SessionEndReason } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { sha256Hex } from '../../lib/secrets';
import { findSessionEnd, SESSION_END } from './repository';

/**
 * Why a console session token no longer authenticates, for its 401: the `ended_reason` its
 * end was recorded with (forced logout, disabled, level changed and mfa reset are an administrator's; an
 * ended session that had expired first counts as expired), its expiry, its disuse for SESSION_IDLE_TIMEOUT,
 * or its user's disable. Null for a
 * token that names no session (or an integrator key): the 401 then says nothing more than the spec's.
 */
export async function sessionEndReason(
  db: Kysely<DB>,
  token: string,
  idleTimeoutMs: number,
): Promise<SessionEndReason | null> {
  const row = await findSessionEnd(db, sha256Hex(token), idleTimeoutMs);
  if (!row) return null;
  if (row.ended_early) {
    switch (row.ended_reason) {
      case SESSION_END.logout:
        return 'signed_out';
      case SESSION_END.passwordReset:
        return 'password_reset';
      case SESSION_END.forcedLogout:
      case SESSION_END.disabled:
      case SESSION_END.levelChanged:
      case SESSION_END.mfaReset:
        return 'ended_by_admin';
      default:
        return null;
    }
  }
  if (row.expired) return 'expired';
  if (row.idle) return 'idle';
  return row.userstatus === 'ACTIVE' ? null : 'ended_by_admin';
}
