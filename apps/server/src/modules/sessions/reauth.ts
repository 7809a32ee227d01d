/**
 * Re-authentication: a signed-in user types the password again before an act that outlives the session
 * (generating an API key), so a stolen session token alone cannot mint a lasting credential. A wrong
 * password counts exactly like a failed sign-in, under the sign-in's own throttle keys: a stolen session
 * cannot guess the password faster here than at the login screen, and a throttled account is refused
 * here too.
 */
import type { Kysely } from 'kysely';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { verifyPassword } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { findCredential } from './repository';
import { admitSignInAttempt, type ThrottleSettings } from './signIn';

/**
 * Whether `password` is the principal's own. Throws the sign-in's 429 when the account is throttled; a
 * wrong password is counted and audited under `action`, and the caller refuses the act.
 */
export async function confirmPassword(
  db: Kysely<DB>,
  settings: ThrottleSettings,
  who: { actor: Principal; address: string; action: string },
  password: string,
): Promise<boolean> {
  const { actor, address, action } = who;
  const user = await findCredential(db, actor.userId);
  // The buckets of a sign-in by this user from this address: one rule, the sign-in's own.
  const admitted = await admitSignInAttempt(db, settings, user, actor.email, address);
  if (admitted.retryAfterMs !== null) {
    await appendAudit(db, { actor, action, address, result: 'throttled' });
    throw admitted.throttled();
  }
  const ok = user !== undefined && (await verifyPassword(user.password_hash, password));
  if (!ok) {
    await appendAudit(db, { actor, action, address, result: 'wrong password' });
    return false;
  }
  // Not a failure after all: take the attempt back, and forget this address's failures, as a sign-in does.
  await admitted.notAFailure();
  await admitted.succeeded();
  return true;
}
