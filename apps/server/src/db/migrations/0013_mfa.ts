import { type Kysely, sql } from 'kysely';

/**
 * Two-factor authentication of console accounts (TOTP, RFC 6238; docs/operations.md, MFA).
 * - `user_mfa`: one row per account that has started or finished enrolment. `secret` is the TOTP secret
 *   sealed with AES-256-GCM (lib in modules/mfa/secret.ts), never stored or logged in clear;
 *   `confirmed_at` is null until a code from the app proved the secret was taken, and only then is
 *   two-factor authentication on. `last_used_step` is the TOTP time step of the last code accepted: a
 *   code of that step or an earlier one is refused, so a code is used once.
 * - `mfa_recovery_codes`: ten per account, stored as a SHA-256 (80 random bits each: no dictionary
 *   to try, see modules/mfa/service.ts); `used_at` set by the one sign-in that used it.
 * - `mfa_challenges`: the second sign-in step, `mfaToken` of login.php's answer, stored as its SHA-256:
 *   short-lived, bound to one account and one sign-in screen, used once.
 */
const STATEMENTS = [
  `CREATE TABLE user_mfa (
    user_id integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    confirmed_at timestamptz,
    last_used_step bigint
  )`,
  `CREATE TABLE mfa_recovery_codes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    code_hash text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    used_at timestamptz,
    UNIQUE (user_id, code_hash)
  )`,
  `CREATE TABLE mfa_challenges (
    token_hash text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    client text NOT NULL CHECK (client IN ('console', 'superadmin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`,
  `CREATE INDEX mfa_challenges_user ON mfa_challenges (user_id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
