/**
 * Forgot / reset password (design.md §3.1): the token is mailed, never returned; it has 256 bits, is
 * stored hashed, is single-use, expires after 30 minutes and is voided by a newer one. A reset ends
 * every session of the user.
 */
import { MESSAGES, RESET_TOKEN_TTL_MS, validatePassword } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { hashPassword, randomSecret, sha256Hex } from '../../lib/secrets';
import { badRequest } from '../../plugins/errors';
import type { Mailer } from '../../plugins/mailer';
import { appendAudit } from '../audit/repository';
import { endUserSessions, recordFailures, throttledKeys } from '../auth/repository';
import { findUserByEmail, findUserById, updateUserRow } from '../users/repository';
import { consumeResetToken, countRecentResets, replaceResetToken } from './repository';

/** At most this many reset mails per account per 30 minutes (mail bombing); the answer never differs. */
export const MAX_RESET_MAILS = 5;
/** At most this many forgot-password requests per client address per 30 minutes. */
export const MAX_FORGOT_PER_ADDRESS = 20;

export interface PasswordContext {
  db: Kysely<DB>;
  mailer: Mailer;
  publicUrl: string;
  passwordMinLength: number;
  log: FastifyBaseLogger;
  /** Mails still being sent (awaited on shutdown and by tests). */
  pending?: Set<Promise<void>>;
}

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

/**
 * Always resolves the same way for known and unknown addresses: the mail is sent after the answer, and a
 * mail failure is logged, never returned (it would tell that the account exists).
 */
export async function forgotPassword(ctx: PasswordContext, email: string, address: string): Promise<void> {
  const addressKey = `forgot-addr:${address}`;
  if (
    (await throttledKeys(ctx.db, [{ key: addressKey, max: MAX_FORGOT_PER_ADDRESS }], RESET_TOKEN_TTL_MS))
      .length > 0
  ) {
    await appendAudit(ctx.db, {
      actor: { label: email.slice(0, 254) },
      action: 'password.forgot',
      address,
      result: 'throttled',
    });
    return;
  }
  await recordFailures(ctx.db, [addressKey], RESET_TOKEN_TTL_MS);
  const user = await findUserByEmail(ctx.db, email);
  if (user?.userstatus !== 'ACTIVE') {
    await appendAudit(ctx.db, {
      actor: { label: email.slice(0, 254) },
      action: 'password.forgot',
      address,
      result: 'no such active user',
    });
    return;
  }
  if ((await countRecentResets(ctx.db, user.id, RESET_TOKEN_TTL_MS)) >= MAX_RESET_MAILS) {
    await appendAudit(ctx.db, {
      actor: { label: user.email },
      action: 'password.forgot',
      address,
      result: 'throttled',
    });
    return;
  }
  const token = randomSecret(32);
  await inTransaction(ctx.db, (trx) =>
    replaceResetToken(trx, {
      hash: sha256Hex(token),
      userId: user.id,
      expiresAt: new Date(Date.now() + RESET_TOKEN_TTL_MS),
    }),
  );
  const link = `${ctx.publicUrl}/resetPassword/${token}`;
  await appendAudit(ctx.db, {
    actor: { label: user.email },
    action: 'password.forgot',
    address,
    result: 'mail queued',
  });
  const delivery = ctx.mailer.send({ to: user.email, ...resetMail(link) }).then(
    (sent) => {
      if (ctx.mailer.kind === 'outbox') {
        // Embedded default only (no SMTP_URL): the operator needs the link to reach the mail.
        ctx.log.info({ to: user.email, file: sent.file, link }, 'password reset mail written to the outbox');
      }
    },
    (error: unknown) =>
      ctx.log.error({ err: error, to: user.email }, 'password reset mail could not be sent'),
  );
  ctx.pending?.add(delivery);
  void delivery.finally(() => ctx.pending?.delete(delivery));
}

export async function resetPassword(
  ctx: PasswordContext,
  token: string,
  newPassword: string,
  address: string,
): Promise<void> {
  if (!token) throw badRequest(MESSAGES.resetTokenInvalid);
  const problem = validatePassword(newPassword, ctx.passwordMinLength);
  if (problem) throw badRequest(problem);
  const passwordHash = await hashPassword(newPassword);
  await inTransaction(ctx.db, async (trx) => {
    const userId = await consumeResetToken(trx, sha256Hex(token));
    const user = userId === undefined ? undefined : await findUserById(trx, userId);
    if (!user) throw badRequest(MESSAGES.resetTokenInvalid);
    await updateUserRow(trx, user.id, { password_hash: passwordHash });
    const ended = await endUserSessions(trx, user.id, 'password reset');
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
