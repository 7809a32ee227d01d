/**
 * Sign-in and sign-out with server-side sessions: argon2id passwords, a random token
 * stored hashed, an absolute expiry, and failures throttled per account and per client address
 * (sessions/signIn.ts). Sign-in completes here alone: after the password, or after the second step that
 * the MFA service checked.
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
import { dummyPasswordHash, randomSecret, sha256Hex, verifyPassword } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { touchKey } from '../keys/repository';
import { hasConfirmedMfa } from '../mfa/repository';
import type { MfaService, MfaSettings, VerifyInput } from '../mfa/service';
import { endSession, insertSession, SESSION_END } from '../sessions/repository';
import { sessionEndReason } from '../sessions/sessionEnd';
import { admitSignInAttempt, type SignInAttempt, type ThrottleSettings } from '../sessions/signIn';
import { findUserByIdentifier, permissionsOfUser } from '../users/repository';
import { findPrincipalByKey, findPrincipalBySession } from './repository';

export interface AuthSettings extends ThrottleSettings {
  sessionTtlMs: number;
  /** Two-factor authentication (modules/mfa). */
  mfa: MfaSettings;
}

export interface LoginAttempt {
  identifier: string;
  password: string;
  client: 'console' | 'superadmin';
  address: string;
}

export class AuthService {
  private readonly db: Kysely<DB>;
  private readonly settings: AuthSettings;
  private readonly mfa: MfaService;

  constructor(deps: { db: Kysely<DB>; settings: AuthSettings; mfa: MfaService }) {
    this.db = deps.db;
    this.settings = deps.settings;
    this.mfa = deps.mfa;
  }

  async login(attempt: LoginAttempt): Promise<LoginAnswer> {
    const { db, settings } = this;
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
    const secondStep = await this.mfa.secondStepFor(user, attempt.client);
    if (secondStep) {
      await appendAudit(db, {
        actor: { label: user.email },
        action: 'login',
        address: attempt.address,
        result: 'mfa required',
      });
      return secondStep;
    }
    return this.openSession(user, { address: attempt.address, attempt: admitted });
  }

  /** `v2/mfa/verify`: the second step the MFA service checks, then the session login.php would give. */
  async verifySecondStep(input: VerifyInput): Promise<Session> {
    const passed = await this.mfa.checkSecondStep(input);
    return this.openSession(passed.user, {
      address: input.address,
      attempt: passed.attempt,
      mfa: passed.method,
    });
  }

  /**
   * The session of a sign-in that succeeded, and the fields login.php answers with: after the password, or
   * after the second step (`v2/mfa/verify` answers the same). An account that must set up two-factor
   * authentication and has not gets `mfa_enrolment_required`: its session can do only that.
   */
  private async openSession(
    user: UserRow,
    how: { address: string; attempt: SignInAttempt; mfa?: 'totp' | 'recovery code' },
  ): Promise<Session> {
    const { db, settings } = this;
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
    const enrol = await this.mfa.mustEnrol(user);
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
  async logout(principal: Principal, address: string): Promise<void> {
    const { db } = this;
    authorize(principal, 'users', 'self', { id: principal.userId }, () => forbidden(MESSAGES.unauthorised));
    if (!principal.sessionTokenHash) return;
    await endSession(db, principal.sessionTokenHash, SESSION_END.logout);
    await appendAudit(db, { actor: principal, action: 'logout', address, result: 'success' });
  }
}

/** What the auth plugin asks of each request's credential (plugins/auth.ts); it runs no query itself. */
export interface Authenticator {
  /** The principal of a session token or an integrator key; null for neither. */
  authenticate(token: string): Promise<Principal | null>;
  /** Why a console session token stopped working, for its 401; null when it names no session. */
  sessionEndReason(token: string): Promise<SessionEndReason | null>;
  /** Whether the user has confirmed two-factor authentication. */
  hasConfirmedMfa(userId: number): Promise<boolean>;
  /** Records an integrator key's use (for a call it was allowed to make). */
  recordKeyUse(keyId: number): Promise<void>;
}

/** A credential's length bounds: anything else is not looked up. */
export const isTokenShaped = (token: string) => token.length >= 16 && token.length <= 256;

export class SessionAuthenticator implements Authenticator {
  private readonly db: Kysely<DB>;
  private readonly idleTimeoutMs: number;

  /** `idleTimeoutMs`: SESSION_IDLE_TIMEOUT, after which an unused session ends (keys have none). */
  constructor(deps: { db: Kysely<DB>; idleTimeoutMs: number }) {
    this.db = deps.db;
    this.idleTimeoutMs = deps.idleTimeoutMs;
  }

  async authenticate(token: string): Promise<Principal | null> {
    if (!isTokenShaped(token)) return null;
    return (
      (await findPrincipalBySession(this.db, token, this.idleTimeoutMs)) ??
      (await findPrincipalByKey(this.db, token))
    );
  }

  sessionEndReason(token: string): Promise<SessionEndReason | null> {
    return sessionEndReason(this.db, token, this.idleTimeoutMs);
  }

  hasConfirmedMfa(userId: number): Promise<boolean> {
    return hasConfirmedMfa(this.db, userId);
  }

  recordKeyUse(keyId: number): Promise<void> {
    return touchKey(this.db, keyId);
  }
}
