/**
 * Two-factor authentication of console accounts (OWASP ASVS L2 §2.8; docs/operations.md, MFA): TOTP
 * (RFC 6238, otplib) as the second sign-in step, enrolment, recovery codes, and the administrators' reset.
 *
 * - Sign-in: login.php checks the password as ever; for an account whose MFA is on it answers a
 *   short-lived, single-use `mfaToken` bound to the account instead of a session, and `v2/mfa/verify`
 *   exchanges it and a code for the very session answer login.php gives: this service checks the code,
 *   and the auth service opens the session (auth/service.ts `AuthService.verifySecondStep`).
 *   A code goes through the same throttle as a password (sessions/signIn.ts `admitSignInAttempt`): a wrong
 *   one is a failed sign-in. A code is accepted once: the time step of the last accepted code is kept and
 *   only a later step passes, so a code seen over a shoulder or in a proxy log is worth nothing.
 * - Lock: the throttle caps guesses per window but lets them add up over days. Wrong codes (TOTP and
 *   recovery) are also counted per account over MFA_LOCK_WINDOW; at MFA_LOCK_AFTER of them the second
 *   factor is locked: every code is refused, the right one too, until an administrator resets the
 *   account's MFA (`resetMfa`, which removes the count with the rest). A right code does not clear the
 *   count: an attacker's guesses are not forgiven by the owner's sign-ins.
 * - Enrolment: a new secret is shown (QR code and typed key) until a code from the app confirms it, and
 *   never again. Confirmation turns MFA on and shows ten recovery codes once.
 * - MFA_REQUIRED_LEVELS (ADMIN and SUPERADMIN by default) must enrol: their session can do nothing else
 *   until they have (plugins/auth.ts refuses every other call). USERs may turn it on.
 * - Recovery codes are 80 random bits each, stored as a SHA-256 salted with the account id. argon2 is for
 *   what people choose (passwords, whose guessable space it makes expensive to search); a random 80-bit
 *   value has no such space: 2^80 SHA-256 computations per code is out of reach, and the codes are
 *   throttled online like passwords. A plain hash also lets the one conditional UPDATE that uses a code
 *   find it, so two requests cannot both use it.
 */
import { randomBytes } from 'node:crypto';
import { MESSAGES, MFA_MESSAGES, type MfaChallenge, type UserLevel } from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import { generateSecret, generateURI, verify } from 'otplib';
import QRCode from 'qrcode';
import { authorize, may, scopeFor } from '../../authz';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB, UserRow } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { endUserSessions, SESSION_END } from '../sessions/repository';
import { admitSignInAttempt, type SignInAttempt, type ThrottleSettings } from '../sessions/signIn';
import { findUserByEmail, findUserById } from '../users/repository';
import { USER_MESSAGES, userObject } from '../users/service';
import {
  confirmPending,
  countUnusedRecoveryCodes,
  countWrongCode,
  deleteMfa,
  findLiveChallenge,
  findMfa,
  hasConfirmedMfa,
  insertChallenge,
  listConfirmedUserIds,
  replaceRecoveryCodes,
  savePendingSecret,
  useChallenge,
  useRecoveryCode,
  useTimeStep,
} from './repository';
import { openSecret, sealSecret } from './secret';

export interface MfaSettings {
  /** MFA_REQUIRED_LEVELS. */
  requiredLevels: readonly UserLevel[];
  /** The AES-256-GCM key that seals TOTP secrets (MFA_SECRET_KEY or the generated one). */
  key: Buffer;
  /** The issuer an authenticator app shows beside the account (PRODUCT_LABEL). */
  issuer: string;
  /** MFA_LOCK_AFTER: wrong codes within the lock window that lock the second factor. */
  lockAfter: number;
  /** MFA_LOCK_WINDOW: the window, opened by a wrong code when none is open. */
  lockWindowMs: number;
}

/** How long the second sign-in step may take after the password. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
/** A code is accepted one time step (30 s) early or late: clocks of phones drift, people are slow. */
const EPOCH_TOLERANCE_S = 30;
export const RECOVERY_CODE_COUNT = 10;

export function mfaRequiredFor(settings: MfaSettings, level: UserLevel): boolean {
  return settings.requiredLevels.includes(level);
}

/** The TOTP time step a code belongs to, or null when it is not a current code of the secret. */
async function matchingStep(secret: string, code: string): Promise<number | null> {
  try {
    const result = await verify({ secret, token: code, epochTolerance: EPOCH_TOLERANCE_S });
    return result.valid && 'timeStep' in result ? result.timeStep : null;
  } catch {
    return null;
  }
}

/** Only a changed MFA_SECRET_KEY (or a damaged row) does this: no code can pass, the account needs a reset. */
const unreadable = () => conflict(MFA_MESSAGES.unreadable);

function openedSecret(settings: MfaSettings, userId: number, sealed: string): string {
  const secret = openSecret(settings.key, userId, sealed);
  if (secret === null) throw unreadable();
  return secret;
}

/** Recovery codes as shown: 20 hex digits in groups of five. What was typed is compared without them. */
function newRecoveryCode(): string {
  return (randomBytes(10).toString('hex').match(/.{5}/g) ?? []).join('-');
}

function normalisedRecoveryCode(typed: string): string | null {
  const value = typed.toLowerCase().replace(/[\s-]/g, '');
  return /^[0-9a-f]{20}$/.test(value) ? value : null;
}

const recoveryCodeHash = (userId: number, normalised: string) => sha256Hex(`${userId}:${normalised}`);

/** The challenge was spent by a request sent alongside, or expired, between the checks. */
class ChallengeGone extends Error {}

export interface VerifyInput {
  mfaToken: string;
  code?: string | undefined;
  recoveryCode?: string | undefined;
  address: string;
}

/** The signed-in account's own: asked of the authority module all the same (`self`). */
function assertSelf(principal: Principal): void {
  authorize(principal, 'users', 'self', { id: principal.userId }, () => notFound(USER_MESSAGES.notFound));
}

/**
 * Resets an account's MFA (a lost phone): secret, recovery codes and open second steps go, and its
 * sessions end; it sets two-factor up again at its next sign-in. Whoever may manage the account resets
 * it (authz/resources/users.ts `manage`: its tenant, an ADMIN USERs, a SUPERADMIN anyone); another
 * tenant's account answers as an unknown one. The operator CLI passes no actor (`npm run cli -- mfa
 * reset`): the way back for the last SUPERADMIN. Shared by the MFA service and the CLI.
 */
export async function resetMfa(
  db: Kysely<DB>,
  actor: Principal | { label: string },
  email: string,
  address: string | null,
) {
  const target = await findUserByEmail(db, email);
  if (!target) throw notFound(USER_MESSAGES.notFound);
  if ('userId' in actor) {
    const account = userObject(target);
    // Another tenant's account: as unknown, and no trace of its name in the actor's audit.
    authorize(actor, 'users', 'read', account, () => notFound(USER_MESSAGES.notFound));
    if (!may(actor, 'users', 'manage', account)) {
      await appendAudit(db, {
        actor,
        action: 'mfa.reset',
        target: target.email,
        address,
        result: 'forbidden',
      });
      throw forbidden(USER_MESSAGES.usersOnly);
    }
  }
  const sessionsEnded = await inTransaction(db, async (trx) => {
    if (!(await deleteMfa(trx, target.id))) throw conflict(MFA_MESSAGES.notSetUp);
    const ended = await endUserSessions(trx, target.id, SESSION_END.mfaReset);
    await appendAudit(trx, {
      actor,
      action: 'mfa.reset',
      target: target.email,
      address,
      result: 'success',
      details: { sessionsEnded: ended },
    });
    return ended;
  });
  return { status: 'success' as const, message: MFA_MESSAGES.reset, sessionsEnded };
}

/** A second step whose code was right: the auth service opens its session (`AuthService.verifySecondStep`). */
export interface PassedSecondStep {
  user: UserRow;
  /** The sign-in attempt the code was counted in: the session's opening ends it. */
  attempt: SignInAttempt;
  method: 'totp' | 'recovery code';
}

export class MfaService {
  private readonly db: Kysely<DB>;
  private readonly settings: MfaSettings;
  private readonly throttle: ThrottleSettings;
  private readonly locked: { inc(): void } | undefined;

  /** `locked`: counts the second factors this instance locked (the metric `lendlock_mfa_locks_total`). */
  constructor(deps: {
    db: Kysely<DB>;
    settings: MfaSettings;
    throttle: ThrottleSettings;
    locked?: { inc(): void };
  }) {
    this.db = deps.db;
    this.settings = deps.settings;
    this.throttle = deps.throttle;
    this.locked = deps.locked;
  }

  /** Whether the user has confirmed two-factor authentication. */
  hasConfirmedMfa(userId: number): Promise<boolean> {
    return hasConfirmedMfa(this.db, userId);
  }

  /** A session of this account must enrol before anything else (login.php's `mfa_enrolment_required`). */
  async mustEnrol(user: UserRow): Promise<boolean> {
    return mfaRequiredFor(this.settings, user.userlevel) && !(await hasConfirmedMfa(this.db, user.id));
  }

  /**
   * After the right password: the second step for an account whose MFA is on, null for one without (its
   * sign-in goes on as the spec has it).
   */
  async secondStepFor(user: UserRow, client: 'console' | 'superadmin'): Promise<MfaChallenge | null> {
    if (!(await hasConfirmedMfa(this.db, user.id))) return null;
    const mfaToken = randomSecret(32);
    await insertChallenge(this.db, {
      tokenHash: sha256Hex(mfaToken),
      userId: user.id,
      client,
      ttlMs: CHALLENGE_TTL_MS,
    });
    return { status: 'mfa_required', message: MFA_MESSAGES.codePrompt, mfaToken };
  }

  /**
   * `v2/mfa/verify`'s check: the challenge, the account and the code. A passed step is handed to the auth
   * service, which opens the session and answers login.php's session answer.
   */
  async checkSecondStep(input: VerifyInput): Promise<PassedSecondStep> {
    const { db, settings } = this;
    const tokenHash = sha256Hex(input.mfaToken);
    const challenge = await findLiveChallenge(db, tokenHash);
    const user = challenge ? await findUserById(db, challenge.user_id) : undefined;
    if (!challenge || !user) throw new AppError(401, 'MFA_CHALLENGE_EXPIRED', MFA_MESSAGES.challengeExpired);
    const audit = (result: string, details?: Record<string, unknown>) =>
      appendAudit(db, {
        actor: { label: user.email },
        action: 'login.mfa',
        address: input.address,
        result,
        ...(details ? { details } : {}),
      });

    // The same throttle as the password, counted before the code is checked.
    const attempt = await admitSignInAttempt(db, this.throttle, user, user.email, input.address);
    if (attempt.retryAfterMs !== null) {
      await audit('throttled');
      throw attempt.throttled();
    }
    // What the password step checked may have changed within the challenge's few minutes.
    if (user.userstatus !== 'ACTIVE') {
      await attempt.notAFailure();
      await audit('disabled');
      throw new AppError(403, 'ACCOUNT_DISABLED', MESSAGES.loginInactive);
    }
    if (challenge.client === 'superadmin' && user.userlevel !== 'SUPERADMIN') {
      await attempt.notAFailure();
      await audit('not superadmin');
      throw new AppError(403, 'FORBIDDEN', MESSAGES.loginSuperadminOnly);
    }
    const mfa = await findMfa(db, user.id);
    if (!mfa?.confirmed_at) {
      // Reset since the password step: the challenge is void.
      await attempt.notAFailure();
      throw new AppError(401, 'MFA_CHALLENGE_EXPIRED', MFA_MESSAGES.challengeExpired);
    }
    if (mfa.locked_at) {
      // No code is checked: the right one is refused as a wrong one is, and neither counts.
      await attempt.notAFailure();
      await audit('locked');
      throw new AppError(403, 'MFA_LOCKED', MFA_MESSAGES.locked);
    }

    const method = input.code !== undefined ? 'totp' : 'recovery code';
    const secret = openSecret(settings.key, user.id, mfa.secret);
    if (method === 'totp' && secret === null) {
      // The server's key, not the person's guess: no failure counted.
      await attempt.notAFailure();
      throw unreadable();
    }
    const step = input.code !== undefined && secret !== null ? await matchingStep(secret, input.code) : null;
    const typedRecovery =
      input.recoveryCode !== undefined ? normalisedRecoveryCode(input.recoveryCode) : null;
    // Use the code and spend the challenge together: a request sent alongside gets neither, and a challenge
    // that expired meanwhile leaves the code (a recovery code above all) unused.
    // A wrong code counts towards the lock in the same transaction; the code that reaches the limit
    // locks the second factor and records it.
    const wrong = async (trx: Transaction<DB>, result: 'invalid code' | 'invalid recovery code') => {
      const count = await countWrongCode(trx, user.id, settings.lockAfter, settings.lockWindowMs);
      if (count.locked) {
        await appendAudit(trx, {
          actor: { label: user.email },
          action: 'mfa.lock',
          target: user.email,
          address: input.address,
          result: 'success',
          details: { failures: count.failures, windowMs: settings.lockWindowMs },
        });
      }
      return { result, locked: count.locked };
    };
    const outcome = await inTransaction(db, async (trx) => {
      if (method === 'totp') {
        if (step === null) return wrong(trx, 'invalid code');
        if (!(await useTimeStep(trx, user.id, step))) return { result: 'code reused', locked: false };
      } else if (
        typedRecovery === null ||
        !(await useRecoveryCode(trx, user.id, recoveryCodeHash(user.id, typedRecovery)))
      ) {
        return wrong(trx, 'invalid recovery code');
      }
      // Thrown, not returned: the code used above is given back with the rest of the transaction.
      if (!(await useChallenge(trx, tokenHash))) throw new ChallengeGone();
      if (method === 'recovery code') {
        await appendAudit(trx, {
          actor: { label: user.email },
          action: 'mfa.recovery.use',
          address: input.address,
          result: 'success',
          details: { left: await countUnusedRecoveryCodes(trx, user.id) },
        });
      }
      return { result: 'ok', locked: false };
    }).catch(async (error: unknown) => {
      if (!(error instanceof ChallengeGone)) throw error;
      await attempt.notAFailure();
      throw new AppError(401, 'MFA_CHALLENGE_EXPIRED', MFA_MESSAGES.challengeExpired);
    });
    if (outcome.result !== 'ok') {
      // The attempt stays counted: a wrong or replayed code is a failed sign-in.
      await audit(outcome.result);
      if (outcome.locked) {
        this.locked?.inc();
        throw new AppError(403, 'MFA_LOCKED', MFA_MESSAGES.locked);
      }
      throw new AppError(
        401,
        'INVALID_CREDENTIALS',
        outcome.result === 'code reused' ? MFA_MESSAGES.codeReused : MFA_MESSAGES.codeInvalid,
      );
    }
    await attempt.notAFailure();
    return { user, attempt, method };
  }

  // ---- The signed-in account's own MFA ----

  async mfaStatus(principal: Principal) {
    assertSelf(principal);
    const mfa = await findMfa(this.db, principal.userId);
    const enabled = Boolean(mfa?.confirmed_at);
    return {
      status: 'success' as const,
      enabled,
      required: mfaRequiredFor(this.settings, principal.userlevel),
      recoveryCodesLeft: enabled ? await countUnusedRecoveryCodes(this.db, principal.userId) : 0,
    };
  }

  async startEnrolment(principal: Principal, address: string) {
    const { db, settings } = this;
    assertSelf(principal);
    const secret = generateSecret();
    if (
      !(await savePendingSecret(db, principal.userId, sealSecret(settings.key, principal.userId, secret)))
    ) {
      throw conflict(MFA_MESSAGES.alreadyEnabled);
    }
    const otpauthUri = generateURI({ issuer: settings.issuer, label: principal.email, secret });
    const svg = await QRCode.toString(otpauthUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    await appendAudit(db, { actor: principal, action: 'mfa.enrol.start', address, result: 'success' });
    return {
      status: 'success' as const,
      otpauthUri,
      qrCode: `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`,
      secret: (secret.match(/.{1,4}/g) ?? []).join(' '),
    };
  }

  async confirmEnrolment(principal: Principal, code: string, address: string) {
    const { db, settings } = this;
    assertSelf(principal);
    const mfa = await findMfa(db, principal.userId);
    if (mfa?.confirmed_at) throw conflict(MFA_MESSAGES.alreadyEnabled);
    if (!mfa) throw conflict(MFA_MESSAGES.notStarted);
    const step = await matchingStep(openedSecret(settings, principal.userId, mfa.secret), code);
    if (step === null) {
      await appendAudit(db, { actor: principal, action: 'mfa.enrol', address, result: 'invalid code' });
      throw badRequest(MFA_MESSAGES.codeInvalid);
    }
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    await inTransaction(db, async (trx) => {
      // The code that confirmed is used: it cannot sign in afterwards.
      if (!(await confirmPending(trx, principal.userId, mfa.secret, step)))
        throw conflict(MFA_MESSAGES.notStarted);
      await replaceRecoveryCodes(
        trx,
        principal.userId,
        codes.map((c) => recoveryCodeHash(principal.userId, normalisedRecoveryCode(c) ?? c)),
      );
      await appendAudit(trx, {
        actor: principal,
        action: 'mfa.enrol',
        address,
        result: 'success',
        details: { recoveryCodes: RECOVERY_CODE_COUNT },
      });
    });
    return { status: 'success' as const, message: MFA_MESSAGES.enabled, recoveryCodes: codes };
  }

  // ---- User Management ----

  /** Resets an account's MFA (`resetMfa`). */
  resetMfa(actor: Principal | { label: string }, email: string, address: string | null) {
    return resetMfa(this.db, actor, email, address);
  }

  /** The accounts `actor` may list (its tenant's) whose MFA is on. */
  async mfaUsers(actor: Principal) {
    return {
      status: 'success' as const,
      userIds: await listConfirmedUserIds(this.db, scopeFor(actor, 'users')),
    };
  }
}
