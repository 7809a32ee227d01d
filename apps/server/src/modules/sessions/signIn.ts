/**
 * The sign-in throttle (ADR 0008): failures counted per account and per client address; the account-wide
 * limit spares the networks the owner signed in from. A password at the login screen, a second-factor
 * code and a password typed again go through it alike.
 */
import { MESSAGES } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { AppError } from '../../core/errors';
import type { DB } from '../../db/types';
import { networkHash } from '../../lib/network';
import {
  clearAttempts,
  isKnownNetwork,
  refundAttempt,
  rememberNetwork,
  reserveAttempt,
  throttledError,
} from './repository';

/** The sign-in throttle's limits (LOGIN_MAX_FAILURES_*, LOGIN_THROTTLE_WINDOW). */
export interface ThrottleSettings {
  maxFailuresPerAccount: number;
  maxFailuresPerAddress: number;
  throttleWindowMs: number;
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
  settings: ThrottleSettings,
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
  settings: ThrottleSettings,
  user: { id: number } | undefined,
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
