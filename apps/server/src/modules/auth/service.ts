/**
 * Sign-in and sign-out with server-side sessions (design.md §5): argon2id passwords, a random token
 * stored hashed, an absolute expiry, and failures throttled per account and per client address; the
 * account-wide limit spares the networks the owner signed in from (ADR 0008).
 */
import {
  LOGGED_IN,
  type LoginAnswer,
  MESSAGES,
  type Session,
  type SessionEndReason,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize } from '../../authz';
import { AppError, forbidden } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB, UserRow } from '../../db/types';
import { networkHash } from '../../lib/network';
import { dummyPasswordHash, randomSecret, sha256Hex, verifyPassword } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { touchKey } from '../keys/repository';
import { hasConfirmedMfa } from '../mfa/repository';
import { type MfaSettings, mustEnrol, secondStepFor } from '../mfa/service';
import { findUserByIdentifier, permissionsOfUser } from '../users/repository';
import {
  clearAttempts,
  endSession,
  findPrincipalByKey,
  findPrincipalBySession,
  insertSession,
  isKnownNetwork,
  refundAttempt,
  rememberNetwork,
  reserveAttempt,
  SESSION_END,
  throttledError,
} from './repository';
import { sessionEndReason } from './sessionEnd';

export interface AuthSettings {
  sessionTtlMs: number;
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  throttleWindowMs: number;
  /** Two-factor authentication (modules/mfa). */
  mfa: MfaSettings;
}

export interface LoginAttempt {
  identifier: string;
  password: string;
  client: 'console' | 'superadmin';
  address: string;
}

/** A network the user signed in from stays known this long after the last sign-in from it. */
const KNOWN_NETWORK_MAX_AGE_MS = 90 * 24 * 3_600_000;

/**
 * Throttle keys: the account from this address (the usual brute force), the address over all accounts
 * (password spraying), and the account over many addresses at ten times the limit (a distributed
 * attack). That last bucket is split (ADR 0008): attempts from a network the owner signed in from count
 * in that network's own bucket, the rest in the account's; so knowing an email and owning many addresses
 * is not enough to lock the owner out. An attacker's failures never throttle another account or another
 * address.
 */
function throttleLimits(
  settings: AuthSettings,
  account: string,
  address: string,
  knownNetwork: string | null,
) {
  return [
    { key: `acct-addr:${account}|${address}`, max: settings.maxFailuresPerAccount },
    { key: `addr:${address}`, max: settings.maxFailuresPerAddress },
    {
      key: knownNetwork ? `acct-net:${account}|${knownNetwork}` : `acct:${account}`,
      max: settings.maxFailuresPerAccount * 10,
    },
  ];
}

/**
 * One sign-in attempt at an account from an address: a password here, or a second-factor code
 * (modules/mfa), which the same limits count.
 */
export interface SignInAttempt {
  /** Set when a limit refused the attempt (then it was not counted): how long until it opens. */
  readonly retryAfterMs: number | null;
  /** The 429 of a refused attempt. */
  throttled(): AppError;
  /** It was no failure (the right password or code): the counted attempt is taken back. */
  notAFailure(): Promise<void>;
  /** The account signed in: its failures from this address are forgotten and the network remembered. */
  succeeded(): Promise<void>;
}

export async function admitSignInAttempt(
  db: Kysely<DB>,
  settings: AuthSettings,
  user: UserRow | undefined,
  identifier: string,
  address: string,
): Promise<SignInAttempt> {
  const account = user ? `user:${user.id}` : `unknown:${identifier.trim().toLowerCase()}`;
  // The same statement for a known and an unknown account (user 0 has no networks): no timing tell.
  const network = networkHash(user?.id ?? 0, address);
  const known = await isKnownNetwork(db, user?.id ?? 0, network, KNOWN_NETWORK_MAX_AGE_MS);
  const limits = throttleLimits(settings, account, address, known ? network : null);
  const keys = limits.map((l) => l.key);

  // Counted before the password is checked, so attempts sent together are at most the limit checked.
  const blocked = await reserveAttempt(db, limits, settings.throttleWindowMs);
  const retryAfterMs = blocked.length > 0 ? Math.max(...blocked.map((b) => b.retryAfterMs)) : null;
  return {
    retryAfterMs,
    throttled: () => throttledError(retryAfterMs ?? 0, MESSAGES.loginThrottled),
    notAFailure: () => refundAttempt(db, keys, settings.throttleWindowMs),
    succeeded: async () => {
      await clearAttempts(db, [keys[0] ?? '']);
      if (user) await rememberNetwork(db, user.id, network);
    },
  };
}

export async function login(
  db: Kysely<DB>,
  settings: AuthSettings,
  attempt: LoginAttempt,
): Promise<LoginAnswer> {
  const user = await findUserByIdentifier(db, attempt.identifier);
  const admitted = await admitSignInAttempt(db, settings, user, attempt.identifier, attempt.address);
  if (admitted.retryAfterMs !== null) {
    await appendAudit(db, {
      actor: { label: attempt.identifier.slice(0, 254) },
      action: 'login',
      address: attempt.address,
      result: 'throttled',
    });
    throw admitted.throttled();
  }

  const ok = await verifyPassword(user?.password_hash ?? (await dummyPasswordHash()), attempt.password);
  if (!user || !ok) {
    // The reserved attempt stays counted: it was a failure.
    await appendAudit(db, {
      actor: user ? { label: user.email } : { label: attempt.identifier.slice(0, 254) },
      action: 'login',
      address: attempt.address,
      result: 'invalid credentials',
    });
    throw new AppError(401, 'INVALID_CREDENTIALS', MESSAGES.loginInvalid);
  }
  // The right password is not a failure: the reserved attempt is taken back whatever follows.
  await admitted.notAFailure();
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

  // An account with two-factor authentication on gets a second step, not a session (modules/mfa). Its
  // failures from this address are not forgotten here but only after the right code: typing the password
  // again buys no more guesses at the code.
  const secondStep = await secondStepFor(db, user, attempt.client);
  if (secondStep) {
    await appendAudit(db, {
      actor: { label: user.email },
      action: 'login',
      address: attempt.address,
      result: 'mfa required',
    });
    return secondStep;
  }
  return openSession(db, settings, user, { address: attempt.address, attempt: admitted });
}

/**
 * The session of a sign-in that succeeded, and login.php's answer (spec §3): after the password, or after
 * the second step (`v2/mfa/verify` answers the same). An account that must set up two-factor
 * authentication and has not gets `mfa_enrolment_required`: its session can do only that.
 */
export async function openSession(
  db: Kysely<DB>,
  settings: AuthSettings,
  user: UserRow,
  how: { address: string; attempt: SignInAttempt; mfa?: 'totp' | 'recovery code' },
): Promise<Session> {
  await how.attempt.succeeded();
  const token = randomSecret(32);
  const expiresAt = new Date(Date.now() + settings.sessionTtlMs);
  await insertSession(db, {
    tokenHash: sha256Hex(token),
    userId: user.id,
    expiresAt,
    clientAddress: how.address,
  });
  await appendAudit(db, {
    actor: { label: user.email },
    action: 'login',
    address: how.address,
    result: 'success',
    ...(how.mfa ? { details: { mfa: how.mfa } } : {}),
  });

  const permissions = await permissionsOfUser(db, user.id);
  const enrol = await mustEnrol(db, settings.mfa, user);
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
    ...(enrol ? { mfa_enrolment_required: true as const } : {}),
  };
}

/** Ends the principal's own session (asked of the authority module as its own account: `self`). */
export async function logout(db: Kysely<DB>, principal: Principal, address: string): Promise<void> {
  authorize(principal, 'users', 'self', { id: principal.userId }, () => forbidden(MESSAGES.unauthorised));
  if (!principal.sessionTokenHash) return;
  await endSession(db, principal.sessionTokenHash, SESSION_END.logout);
  await appendAudit(db, { actor: principal, action: 'logout', address, result: 'success' });
}

/** What the auth plugin asks of each request's credential (plugins/auth.ts); it runs no query itself. */
export interface Authenticator {
  /** The principal of a session token or an integrator key; null for neither. */
  authenticate(token: string): Promise<Principal | null>;
  /** Why a console session token stopped working (issue 17.5); null when it names no session. */
  sessionEndReason(token: string): Promise<SessionEndReason | null>;
  /** Whether the user has confirmed two-factor authentication. */
  hasConfirmedMfa(userId: number): Promise<boolean>;
  /** Records an integrator key's use (for a call it was allowed to make). */
  recordKeyUse(keyId: number): Promise<void>;
}

/** A credential's length bounds: anything else is not looked up. */
export const isTokenShaped = (token: string) => token.length >= 16 && token.length <= 256;

export function authenticator(db: Kysely<DB>): Authenticator {
  return {
    async authenticate(token) {
      if (!isTokenShaped(token)) return null;
      return (await findPrincipalBySession(db, token)) ?? (await findPrincipalByKey(db, token));
    },
    sessionEndReason: (token) => sessionEndReason(db, token),
    hasConfirmedMfa: (userId) => hasConfirmedMfa(db, userId),
    recordKeyUse: (keyId) => touchKey(db, keyId),
  };
}
