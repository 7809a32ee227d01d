/**
 * Forgot / reset password: the token is mailed, never returned; it has 256 bits, is
 * stored hashed, is single-use, expires after 30 minutes and is voided by a newer one. A reset ends
 * every session of the user.
 *
 * A forgot-password request answers before anything that depends on the account is done (the address's
 * limit is all that runs first): the account is looked up, the token made and its mail queued after the
 * answer has left, so the answer takes the same time whether or not the address belongs to anyone. The
 * mail is written to the outbox in the token's transaction and sent by the outbox worker, with retries.
 */
import { MESSAGES, RESET_TOKEN_TTL_MS } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { badRequest } from '../../core/errors';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { passwordProblem } from '../../lib/password-policy';
import { hashPassword, randomSecret, sha256Hex } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { deactivateKeysOf } from '../keys/service';
import type { Mailer } from '../mail/mailer';
import type { MailOutbox } from '../mail/outbox';
import { endUserSessions, reserveAttempt, SESSION_END } from '../sessions/repository';
import { findUserByEmail, findUserById, updateUserRow } from '../users/repository';
import { consumeResetToken, replaceResetToken } from './repository';

/** At most this many reset mails per account per 30 minutes (mail bombing); the answer never differs. */
export const MAX_RESET_MAILS = 5;
/** At most this many forgot-password requests per client address per 30 minutes. */
export const MAX_FORGOT_PER_ADDRESS = 20;

export function resetMail(link: string): { subject: string; text: string } {
  return {
    subject: 'Reset your Lendlock password',
    text: [
      'Someone asked to reset the password of your Lendlock console account.',
      '',
      `Open this link within 30 minutes to choose a new password:`,
      link,
      '',
      'The link works once. If you did not ask for it, ignore this mail: your password stays as it is.',
    ].join('\n'),
  };
}

/** Forgot and reset password. */
export class PasswordService {
  private readonly db: Kysely<DB>;
  private readonly mailer: Mailer;
  private readonly mail: MailOutbox;
  private readonly publicUrl: string;
  private readonly passwordMinLength: number;
  private readonly log: FastifyBaseLogger;
  /** Requests still being worked on after their answer (awaited on shutdown). */
  readonly pending = new Set<Promise<void>>();

  constructor(deps: {
    db: Kysely<DB>;
    mailer: Mailer;
    mail: MailOutbox;
    publicUrl: string;
    passwordMinLength: number;
    log: FastifyBaseLogger;
  }) {
    this.db = deps.db;
    this.mailer = deps.mailer;
    this.mail = deps.mail;
    this.publicUrl = deps.publicUrl;
    this.passwordMinLength = deps.passwordMinLength;
    this.log = deps.log;
  }

  /**
   * The part of a forgot-password request that runs before the answer: the same statements for every
   * address, known or not (only the client address's limit, counted atomically). Returns the rest, which
   * the caller runs after the answer has been sent (`completeForgotPassword`).
   */
  async acceptForgotPassword(email: string, address: string): Promise<() => Promise<void>> {
    const blocked = await reserveAttempt(
      this.db,
      [{ key: `forgot-addr:${address}`, max: MAX_FORGOT_PER_ADDRESS }],
      RESET_TOKEN_TTL_MS,
    );
    if (blocked.length > 0) {
      return async () => {
        await appendAudit(this.db, {
          actor: { label: email.slice(0, 254) },
          action: 'password.forgot',
          address,
          result: 'throttled',
        });
      };
    }
    return () => this.completeForgotPassword(email, address);
  }

  /**
   * After the answer: an active user gets a new token and its mail, queued in one transaction (the token
   * never exists without its mail, nor the mail without its token), at most MAX_RESET_MAILS per 30 minutes
   * (counted atomically, so requests sent together cannot bomb the mailbox). Anything else is audited only.
   */
  private async completeForgotPassword(email: string, address: string): Promise<void> {
    const user = await findUserByEmail(this.db, email);
    if (user?.userstatus !== 'ACTIVE') {
      await appendAudit(this.db, {
        actor: { label: email.slice(0, 254) },
        action: 'password.forgot',
        address,
        result: 'no such active user',
      });
      return;
    }
    const limited = await reserveAttempt(
      this.db,
      [{ key: `forgot-acct:${user.id}`, max: MAX_RESET_MAILS }],
      RESET_TOKEN_TTL_MS,
    );
    if (limited.length > 0) {
      await appendAudit(this.db, {
        actor: { label: user.email },
        action: 'password.forgot',
        address,
        result: 'throttled',
      });
      return;
    }
    const token = randomSecret(32);
    const expiresAt = new Date(Date.now() + RESET_TOKEN_TTL_MS);
    const link = `${this.publicUrl}/resetPassword/${token}`;
    await inTransaction(this.db, async (trx) => {
      await replaceResetToken(trx, { hash: sha256Hex(token), userId: user.id, expiresAt });
      // A reset mail is worth sending while its link works, not later.
      await this.mail.enqueue(trx, {
        kind: 'password_reset',
        to: user.email,
        ...resetMail(link),
        giveUpAt: expiresAt,
      });
      await appendAudit(trx, {
        actor: { label: user.email },
        action: 'password.forgot',
        address,
        result: 'mail queued',
      });
    });
    if (this.mailer.kind === 'outbox') {
      // Embedded default only (no SMTP_URL): the operator needs the link to reach the mail.
      this.log.info({ to: user.email, link }, 'password reset mail written to the outbox');
    }
    this.mail.wake();
  }

  async resetPassword(token: string, newPassword: string, address: string): Promise<void> {
    if (!token) throw badRequest(MESSAGES.resetTokenInvalid);
    const problem = passwordProblem(newPassword, this.passwordMinLength);
    if (problem) throw badRequest(problem);
    const passwordHash = await hashPassword(newPassword);
    await inTransaction(this.db, async (trx) => {
      const userId = await consumeResetToken(trx, sha256Hex(token));
      const user = userId === undefined ? undefined : await findUserById(trx, userId);
      if (!user) throw badRequest(MESSAGES.resetTokenInvalid);
      await updateUserRow(trx, user.id, { password_hash: passwordHash });
      const ended = await endUserSessions(trx, user.id, SESSION_END.passwordReset);
      // Whoever had the account before the reset may hold its keys too: a reset switches them off.
      await deactivateKeysOf(trx, user, 'password reset', { actor: null, address });
      await appendAudit(trx, {
        actor: { label: user.email },
        action: 'password.reset',
        target: user.email,
        address,
        result: 'success',
        details: { sessionsEnded: ended },
      });
    });
  }
}
