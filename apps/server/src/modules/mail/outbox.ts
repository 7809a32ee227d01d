/**
 * The mail outbox worker (ADR 0008): mail is written to `mail_outbox` in the transaction that needs it
 * and sent from there by every instance, so a mail server that is down, slow or restarting loses nothing.
 * Each instance claims one due mail at a time (FOR UPDATE SKIP LOCKED, under a lease), sends it, and
 * either marks it sent or schedules the next try with exponential backoff (1 min doubling to 1 h). A mail
 * refused for good (an SMTP 5xx) or past its deadline (a reset link's expiry; 24 h by default) is given
 * up where operators see it: an error log line and `lendlock_mail_failed_total`. Delivery is at least
 * once: a sender that dies after the SMTP server took the mail but before recording it sends it again.
 * A body waits sealed (AES-256-GCM under the secrets key, bound to the mail's kind and recipient), so a
 * reader of the database finds no usable reset link in it; it is opened only to be sent, and dropped
 * once sent or given up. A body that does not open (the secrets key changed) is given up with that reason.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { Counter } from 'prom-client';
import type { DB } from '../../db/types';
import { Poller } from '../../lib/poller';
import { seal, unseal } from '../../lib/sealed';
import { isSealed } from '../../lib/secrets-at-rest';
import type { Mailer } from './mailer';
import {
  type ClaimedMail,
  claimDueMail,
  enqueueMail,
  failExpiredMail,
  markMailFailed,
  markMailSent,
  type QueuedMail,
  scheduleMailRetry,
} from './repository';

export const MAIL_RETRY_FIRST_MS = 60_000;
export const MAIL_RETRY_MAX_MS = 3_600_000;
export const MAIL_GIVE_UP_AFTER_MS = 24 * 3_600_000;
/** How often each instance looks for due mail (mail it queues itself is sent at once). */
export const MAIL_POLL_MS = 5_000;
/** Longer than one send can take with the transport's timeouts, so a mail is never sent twice at once. */
export const MAIL_LEASE_MS = 5 * 60_000;

/** The wait before attempt `attempts + 1`: 1, 2, 4, … minutes, at most an hour. */
export function retryDelayMs(attempts: number): number {
  return Math.min(MAIL_RETRY_FIRST_MS * 2 ** Math.max(0, attempts - 1), MAIL_RETRY_MAX_MS);
}

/**
 * A refusal that a retry would get again: an SMTP 5xx reply (RFC 5321), except 503 (a bad command
 * sequence, fine on a new connection) and an authentication failure (the operator fixes SMTP_URL and
 * restarts; the waiting mail should then go).
 */
export function isPermanentMailError(error: unknown): boolean {
  const { responseCode, code } = (error ?? {}) as { responseCode?: number; code?: string };
  return (
    typeof responseCode === 'number' &&
    responseCode >= 500 &&
    responseCode < 600 &&
    responseCode !== 503 &&
    code !== 'EAUTH'
  );
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.slice(0, 500);
}

export interface MailOutboxOptions {
  db: Kysely<DB>;
  mailer: Mailer;
  log: FastifyBaseLogger;
  /** `lendlock_mail_failed_total`, by kind. */
  failed: Counter<'kind'>;
  /** The secrets key (SECRETS_KEY or DATA_DIR/secrets.key) that seals the bodies waiting in the table. */
  sealKey: () => Buffer;
  pollMs?: number;
}

export class MailOutbox {
  private readonly poller: Poller;

  constructor(private readonly options: MailOutboxOptions) {
    this.poller = new Poller((stopped) => this.drain(stopped), options.pollMs ?? MAIL_POLL_MS);
  }

  /** Queues a mail in `db` (the caller's transaction); call `wake()` once it has committed. */
  enqueue(db: Kysely<DB>, mail: Omit<QueuedMail, 'giveUpAt'> & { giveUpAt?: Date }): Promise<number> {
    return enqueueMail(db, {
      ...mail,
      text: seal(this.options.sealKey(), bodyContext(mail.kind, mail.to), mail.text),
      giveUpAt: mail.giveUpAt ?? new Date(Date.now() + MAIL_GIVE_UP_AFTER_MS),
    });
  }

  /** Polls for due mail until `stop()`. */
  start(): void {
    this.poller.start();
  }

  /** Stops polling and waits for the mail being sent, if any; the rest waits in the table. */
  stop(): Promise<void> {
    return this.poller.stop();
  }

  /** Sends what is due now (after this instance queued a mail), without waiting for the next poll. */
  wake(): void {
    this.poller.wake();
  }

  /** Sends every due mail, one at a time, and gives up the expired ones. Never throws. */
  runOnce(): Promise<void> {
    return this.poller.runOnce();
  }

  private async drain(stopped: () => boolean): Promise<void> {
    const { db, log } = this.options;
    try {
      for (const mail of await failExpiredMail(db)) {
        this.options.failed.inc({ kind: mail.kind });
        log.error(
          {
            mailId: mail.id,
            kind: mail.kind,
            to: mail.recipient,
            attempts: mail.attempts,
            reason: mail.last_error,
          },
          'mail could not be sent before its deadline; given up',
        );
      }
      for (;;) {
        if (stopped()) return;
        const mail = await claimDueMail(db, MAIL_LEASE_MS);
        if (!mail) return;
        await this.send(mail);
      }
    } catch (error) {
      // The database is unreachable: the mail stays queued, the next poll tries again.
      log.warn({ err: error }, 'mail outbox: could not read the queue');
    }
  }

  private async send(mail: ClaimedMail): Promise<void> {
    const { db, log, mailer } = this.options;
    const text = this.openBody(mail);
    if (text === null) {
      await markMailFailed(db, mail.id, UNOPENED_BODY);
      this.options.failed.inc({ kind: mail.kind });
      log.error({ mailId: mail.id, kind: mail.kind, to: mail.recipient }, `mail given up: ${UNOPENED_BODY}`);
      return;
    }
    let sent: { file?: string };
    try {
      sent = await mailer.send({ to: mail.recipient, subject: mail.subject, text });
    } catch (error) {
      const reason = describe(error);
      const nextAt = Date.now() + retryDelayMs(mail.attempts);
      if (!isPermanentMailError(error) && nextAt < new Date(mail.give_up_at).getTime()) {
        await scheduleMailRetry(db, mail.id, retryDelayMs(mail.attempts), reason);
        log.warn(
          { mailId: mail.id, kind: mail.kind, to: mail.recipient, attempts: mail.attempts, err: error },
          'mail not sent; will retry',
        );
        return;
      }
      await markMailFailed(db, mail.id, reason);
      this.options.failed.inc({ kind: mail.kind });
      log.error(
        { mailId: mail.id, kind: mail.kind, to: mail.recipient, attempts: mail.attempts, err: error },
        isPermanentMailError(error)
          ? 'mail refused by the mail server; given up'
          : 'mail could not be sent before its deadline; given up',
      );
      return;
    }
    await markMailSent(db, mail.id);
    log.info({ mailId: mail.id, kind: mail.kind, to: mail.recipient, file: sent.file }, 'mail sent');
  }

  /** The body to send: opened when sealed (null when it does not open), as written when an older version wrote it plain. */
  private openBody(mail: ClaimedMail): string | null {
    if (mail.body === null) return '';
    if (!isSealed(mail.body)) return mail.body;
    return unseal(this.options.sealKey(), bodyContext(mail.kind, mail.recipient), mail.body);
  }
}

/** What a sealed body is bound to: it opens only in a row of its kind and recipient. */
const bodyContext = (kind: string, to: string) => `mail_outbox:${kind}:${to}`;

export const UNOPENED_BODY = 'its body does not open with the secrets key (SECRETS_KEY changed?)';
