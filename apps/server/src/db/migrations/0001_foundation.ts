import { PERMISSION_NAMES } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE users (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email text NOT NULL,
    phone text,
    password_hash text NOT NULL,
    userlevel text NOT NULL CHECK (userlevel IN ('USER', 'ADMIN', 'SUPERADMIN')),
    userstatus text NOT NULL DEFAULT 'ACTIVE' CHECK (userstatus IN ('ACTIVE', 'INACTIVE')),
    retailer_phone text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  );`,
  `CREATE UNIQUE INDEX users_email_key ON users (lower(email));`,
  `CREATE UNIQUE INDEX users_phone_key ON users (phone) WHERE phone IS NOT NULL;`,
  `CREATE TABLE permissions (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    permission_name text NOT NULL UNIQUE
  );`,
  `CREATE TABLE user_permissions (
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    permission_id integer NOT NULL REFERENCES permissions (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, permission_id)
  );`,
  `CREATE TABLE sessions (
    token_hash text PRIMARY KEY,
    user_id integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    ended_at timestamptz,
    ended_reason text,
    client_address text
  );`,
  `CREATE INDEX sessions_user_live ON sessions (user_id) WHERE ended_at IS NULL;`,
  `CREATE TABLE api_keys (
    id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    key_name text NOT NULL,
    key_hash text NOT NULL UNIQUE,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'inactive')),
    user_id integer NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT now()
  );`,
  `CREATE TABLE login_throttle (
    key text PRIMARY KEY,
    window_start timestamptz NOT NULL,
    failures integer NOT NULL
  );`,
  `CREATE TABLE settings (
    key text PRIMARY KEY,
    value text NOT NULL
  );`,
  `CREATE TABLE audit_log (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at timestamptz NOT NULL DEFAULT now(),
    actor_user_id integer,
    actor_key_id integer,
    actor text NOT NULL,
    action text NOT NULL,
    target text,
    address text,
    result text NOT NULL,
    details jsonb
  );`,
  `CREATE INDEX audit_log_at ON audit_log (at);`,
  `CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
  END;
  $$;`,
  `CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();`,
  `CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();`,
];

/** Users, permissions, server-side sessions, API keys, login throttling, settings, the audit log. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);

  for (const name of PERMISSION_NAMES) {
    await sql`INSERT INTO permissions (permission_name) VALUES (${name})`.execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
