import { type Kysely, sql } from 'kysely';

/**
 * Sign-in that cannot be abused, and mail that is not lost (ADR 0008).
 * - `login_known_networks`: the networks (an IPv4 /24, an IPv6 /64, stored as a SHA-256 with the user
 *   id) a user has signed in from, with the last time. Failed sign-ins from a known network count in a
 *   bucket of their own, so a flood from elsewhere cannot lock the owner out of the account.
 * - `mail_outbox`: outgoing mail, written in the transaction that makes it necessary (a reset token) and
 *   sent by a worker on every instance, with retries and backoff until `give_up_at`. The body (which
 *   carries the reset link) is cleared once the mail is sent or given up.
 */
const STATEMENTS = [
  `CREATE TABLE login_known_networks (
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    network_hash text NOT NULL,
    first_seen_at timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, network_hash)
  )`,
  `CREATE TABLE mail_outbox (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind text NOT NULL,
    recipient text NOT NULL,
    subject text NOT NULL,
    body text,
    created_at timestamptz NOT NULL DEFAULT now(),
    give_up_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text,
    sent_at timestamptz,
    failed_at timestamptz
  )`,
  // The worker's claim and the pending gauge read only unfinished mail.
  `CREATE INDEX mail_outbox_due ON mail_outbox (next_attempt_at) WHERE sent_at IS NULL AND failed_at IS NULL`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
