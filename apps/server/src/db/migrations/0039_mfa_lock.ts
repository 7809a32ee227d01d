/**
 * 0039: the long-window limit on wrong second-factor codes (modules/mfa/service.ts). `user_mfa` counts
 * the wrong codes (TOTP and recovery) of the account in a window that opens at the first one
 * (`failures`, `failures_since`); when MFA_LOCK_AFTER of them fall within MFA_LOCK_WINDOW, `locked_at`
 * is set and every further code is refused until an administrator resets the account's MFA (which
 * deletes the row). The table keeps its row-level security (0032): the new columns are the row's.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE user_mfa
    ADD COLUMN failures integer NOT NULL DEFAULT 0,
    ADD COLUMN failures_since timestamptz,
    ADD COLUMN locked_at timestamptz`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
