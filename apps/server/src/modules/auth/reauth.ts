/**
 * Re-authentication: a signed-in user types the password again before an act that outlives the session
 * (generating an API key), so a stolen session token alone cannot mint a lasting credential. A wrong
 * password counts exactly like a failed sign-in, under the sign-in's own throttle keys: a stolen session
 * cannot guess the password faster here than at the login screen, and a throttled account is refused
 * here too.
 */
import { MESSAGES } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { networkHash } from '../../lib/network';
import { verifyPassword } from '../../lib/secrets';
import type { Principal } from '../../plugins/auth';
import { appendAudit } from '../audit/repository';
import { findUserById } from '../users/repository';
import { clearAttempts, isKnownNetwork, refundAttempt, reserveAttempt, throttledError } from './repository';
import { type AuthSettings, KNOWN_NETWORK_MAX_AGE_MS, throttleLimits } from './service';

/**
 * Whether `password` is the principal's own. Throws the sign-in's 429 when the account is throttled; a
 * wrong password is counted and audited under `action`, and the caller refuses the act.
 */
export async function confirmPassword(
  db: Kysely<DB>,
  settings: AuthSettings,
  who: { actor: Principal; address: string; action: string },
  password: string,
): Promise<boolean> {
  const { actor, address, action } = who;
  // The buckets of a sign-in by this user from this address (login() in service.ts).
  const network = networkHash(actor.userId, address);
  const known = await isKnownNetwork(db, actor.userId, network, KNOWN_NETWORK_MAX_AGE_MS);
  const limits = throttleLimits(settings, `user:${actor.userId}`, address, known ? network : null);
  const blocked = await reserveAttempt(db, limits, settings.throttleWindowMs);
  if (blocked.length > 0) {
    await appendAudit(db, { actor, action, address, result: 'throttled' });
    throw throttledError(Math.max(...blocked.map((b) => b.retryAfterMs)), MESSAGES.loginThrottled);
  }
  const user = await findUserById(db, actor.userId);
  const ok = user !== undefined && (await verifyPassword(user.password_hash, password));
  if (!ok) {
    await appendAudit(db, { actor, action, address, result: 'wrong password' });
    return false;
  }
  // Not a failure after all: take the attempt back, and forget this address's failures, as a sign-in does.
  const keys = limits.map((l) => l.key);
  await refundAttempt(db, keys, settings.throttleWindowMs);
  await clearAttempts(db, keys.slice(0, 1));
  return true;
}
