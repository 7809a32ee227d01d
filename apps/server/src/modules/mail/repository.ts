import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types';

export interface QueuedMail {
  kind: string;
  to: string;
  subject: string;
  text: string;
  /** After this the mail is not worth sending any more (a reset link's expiry). */
  giveUpAt: Date;
}

export interface ClaimedMail {
  id: number;
  kind: string;
  recipient: string;
  subject: string;
  body: string | null;
  attempts: number;
  give_up_at: Date;
}

const unfinished = sql<boolean>`sent_at IS NULL AND failed_at IS NULL`;

/** Writes a mail to the outbox; pass the transaction of what makes the mail necessary. */
export async function enqueueMail(db: Kysely<DB>, mail: QueuedMail): Promise<number> {
  const row = await db
    .insertInto('mail_outbox')
    .values({
      kind: mail.kind,
      recipient: mail.to,
      subject: mail.subject,
      body: mail.text,
      give_up_at: mail.giveUpAt,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Claims the next due mail for `leaseMs`: its next attempt moves past the lease, so no other instance
 * takes it while this one sends (SKIP LOCKED: instances claiming at once take different rows). If the
 * sender dies, the mail is due again when the lease ends.
 */
export async function claimDueMail(db: Kysely<DB>, leaseMs: number): Promise<ClaimedMail | undefined> {
  const { rows } = await sql<ClaimedMail>`
    UPDATE mail_outbox SET attempts = attempts + 1,
      next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
    WHERE id = (
      SELECT id FROM mail_outbox
      WHERE ${unfinished} AND next_attempt_at <= now() AND give_up_at > now()
      ORDER BY next_attempt_at LIMIT 1 FOR UPDATE SKIP LOCKED)
    RETURNING id, kind, recipient, subject, body, attempts, give_up_at`.execute(db);
  const row = rows[0];
  return row ? { ...row, id: Number(row.id) } : undefined;
}

export async function markMailSent(db: Kysely<DB>, id: number): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ sent_at: sql<Date>`now()`, body: null, last_error: null })
    .where('id', '=', id)
    .execute();
}

export async function scheduleMailRetry(
  db: Kysely<DB>,
  id: number,
  delayMs: number,
  error: string,
): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({
      next_attempt_at: sql<Date>`now() + ${delayMs} * interval '1 millisecond'`,
      last_error: error,
    })
    .where('id', '=', id)
    .execute();
}

/** Gives a mail up: it stays as a record (without its body) for operators. */
export async function markMailFailed(db: Kysely<DB>, id: number, error: string): Promise<void> {
  await db
    .updateTable('mail_outbox')
    .set({ failed_at: sql<Date>`now()`, body: null, last_error: error })
    .where('id', '=', id)
    .execute();
}

/**
 * Gives up every mail past its deadline that nobody is sending (not under a lease): one whose retries
 * all failed, or that waited while no instance ran. Returns them, to be logged and counted once.
 */
export async function failExpiredMail(
  db: Kysely<DB>,
): Promise<{ id: number; kind: string; recipient: string; attempts: number; last_error: string | null }[]> {
  const { rows } = await sql<{
    id: number;
    kind: string;
    recipient: string;
    attempts: number;
    last_error: string | null;
  }>`
    UPDATE mail_outbox SET failed_at = now(), body = NULL,
      last_error = coalesce(last_error, 'never attempted')
    WHERE ${unfinished} AND give_up_at <= now() AND next_attempt_at <= now()
    RETURNING id, kind, recipient, attempts, last_error`.execute(db);
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** Mail not yet sent nor given up (the pending gauge). */
export async function countPendingMail(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('mail_outbox')
    .select(sql<number>`count(*)::int`.as('n'))
    .where(unfinished)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
