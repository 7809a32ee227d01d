/**
 * Sign-in and sign-out with server-side sessions (design.md §5): argon2id passwords, a random token
 * stored hashed, an absolute expiry, and failures throttled per account and per client address.
 */
import { LOGGED_IN, MESSAGES, type Session } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { dummyPasswordHash, randomSecret, sha256Hex, verifyPassword } from '../../lib/secrets';
import type { Principal } from '../../plugins/auth';
import { AppError } from '../../plugins/errors';
import { appendAudit } from '../audit/repository';
import { findUserByIdentifier, permissionsOfUser } from '../users/repository';
import {
  clearFailures,
  endSession,
  insertSession,
  recordFailures,
  throttledError,
  throttledKeys,
} from './repository';

export interface AuthSettings {
  sessionTtlMs: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  throttleWindowMs: number;
}

export interface LoginAttempt {
  identifier: string;
  password: string;
  client: 'console' | 'superadmin';
  address: string;
}

/**
 * Throttle keys: the account from this address (the usual brute force), the address over all accounts
 * (password spraying), and the account over all addresses at ten times the limit (a distributed attack).
 * An attacker's failures never throttle another account or another address.
 */
function throttleLimits(settings: AuthSettings, account: string, address: string) {
  return [
    { key: `acct-addr:${account}|${address}`, max: settings.maxFailuresPerAccount },
    { key: `addr:${address}`, max: settings.maxFailuresPerAddress },
    { key: `acct:${account}`, max: settings.maxFailuresPerAccount * 10 },
  ];
}

export async function login(db: Kysely<DB>, settings: AuthSettings, attempt: LoginAttempt): Promise<Session> {
  const user = await findUserByIdentifier(db, attempt.identifier);
  const account = user ? `user:${user.id}` : `unknown:${attempt.identifier.trim().toLowerCase()}`;
  const limits = throttleLimits(settings, account, attempt.address);

  const blocked = await throttledKeys(db, limits, settings.throttleWindowMs);
  if (blocked.length > 0) {
    const retryAfterMs = Math.max(...blocked.map((b) => b.retryAfterMs));
    await appendAudit(db, {
      actor: { label: attempt.identifier.slice(0, 254) },
      action: 'login',
      address: attempt.address,
      result: 'throttled',
    });
    throw throttledError(retryAfterMs, MESSAGES.loginThrottled);
  }

  const ok = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), attempt.password);
  if (!user || !ok) {
    await recordFailures(
      db,
      limits.map((l) => l.key),
      settings.throttleWindowMs,
    );
    await appendAudit(db, {
      actor: user ? { label: user.email } : { label: attempt.identifier.slice(0, 254) },
      action: 'login',
      address: attempt.address,
      result: 'invalid credentials',
    });
    throw new AppError(401, 'INVALID_CREDENTIALS', MESSAGES.loginInvalid);
  }
  if (user.userstatus !== 'ACTIVE') {
    await appendAudit(db, {
      actor: { label: user.email },
      action: 'login',
      address: attempt.address,
      result: 'disabled',
    });
    throw new AppError(403, 'ACCOUNT_DISABLED', MESSAGES.loginInactive);
  }
  if (attempt.client === 'superadmin' && user.userlevel !== 'SUPERADMIN') {
    await appendAudit(db, {
      actor: { label: user.email },
      action: 'login',
      address: attempt.address,
      result: 'not superadmin',
    });
    throw new AppError(403, 'FORBIDDEN', MESSAGES.loginSuperadminOnly);
  }

  await clearFailures(db, [limits[0]?.key ?? '']);
  const token = randomSecret(32);
  const expiresAt = new Date(Date.now() + settings.sessionTtlMs);
  await insertSession(db, {
    tokenHash: sha256Hex(token),
    userId: user.id,
    expiresAt,
    clientAddress: attempt.address,
  });
  await appendAudit(db, {
    actor: { label: user.email },
    action: 'login',
    address: attempt.address,
    result: 'success',
  });

  const permissions = await permissionsOfUser(db, user.id);
  return {
    status: 'success',
    message: MESSAGES.loginSuccess,
    expiry: expiresAt.toISOString(),
    token,
    email: user.email,
    userlevel: user.userlevel,
    loggedin: LOGGED_IN,
    permissions,
    ...(user.retailer_phone ? { retailer_phone: user.retailer_phone } : {}),
  };
}

export async function logout(db: Kysely<DB>, principal: Principal, address: string): Promise<void> {
  if (!principal.sessionTokenHash) return;
  await endSession(db, principal.sessionTokenHash, 'logout');
  await appendAudit(db, { actor: principal, action: 'logout', address, result: 'success' });
}
