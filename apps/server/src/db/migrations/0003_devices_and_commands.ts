import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE financed_imeis (
    imei text PRIMARY KEY,
    source text NOT NULL DEFAULT 'api',
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE devices (
    imei1 text PRIMARY KEY,
    imei2 text,
    manufacturer text NOT NULL DEFAULT '',
    brand text NOT NULL DEFAULT '',
    model text NOT NULL DEFAULT '',
    appversion text NOT NULL DEFAULT '',
    apptype text NOT NULL DEFAULT '',
    retailer_phone text,
    claimstatus text NOT NULL DEFAULT 'ENROLLED' CHECK (claimstatus IN ('ENROLLED', 'DEENROLLED', 'RELEASED')),
    registrationstatus text NOT NULL DEFAULT 'REGISTERED' CHECK (registrationstatus IN ('REGISTERED', 'RE-REGISTERED')),
    match_status text NOT NULL DEFAULT 'NO' CHECK (match_status IN ('YES', 'NO')),
    credential_hash text,
    created_at timestamptz NOT NULL DEFAULT now(),
    registered_at timestamptz NOT NULL DEFAULT now(),
    online boolean NOT NULL DEFAULT false,
    last_seen_at timestamptz,
    reported_state jsonb,
    desired_state jsonb NOT NULL DEFAULT '{}'::jsonb,
    last_command text,
    last_command_at timestamptz
  )`,
  `CREATE INDEX devices_imei2 ON devices (imei2) WHERE imei2 IS NOT NULL`,
  `CREATE INDEX devices_created_at ON devices (created_at)`,
  `CREATE INDEX devices_claimstatus ON devices (claimstatus)`,
  `CREATE INDEX devices_online ON devices (imei1) WHERE online`,
  `CREATE TABLE registrations (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    imei1 text NOT NULL,
    imei2 text,
    match_status text NOT NULL,
    registration_status text NOT NULL,
    manufacturer text NOT NULL DEFAULT '',
    brand text NOT NULL DEFAULT '',
    model text NOT NULL DEFAULT '',
    appversion text NOT NULL DEFAULT '',
    apptype text NOT NULL DEFAULT '',
    retailer_phone text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX registrations_imei1 ON registrations (imei1)`,
  `CREATE INDEX registrations_created_at ON registrations (created_at)`,
  `CREATE TABLE deenrollments (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    imei1 text NOT NULL,
    imei2 text,
    action text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX deenrollments_imei1 ON deenrollments (imei1)`,
  `CREATE INDEX deenrollments_created_at ON deenrollments (created_at)`,
  `CREATE TABLE releases (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    imei1 text NOT NULL,
    imei2 text,
    released_by text NOT NULL,
    transaction_id text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE INDEX releases_imei1 ON releases (imei1)`,
  `CREATE TABLE commands (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    transaction_id text NOT NULL UNIQUE,
    imei1 text NOT NULL,
    command text NOT NULL,
    options jsonb NOT NULL DEFAULT '{}'::jsonb,
    kind text NOT NULL CHECK (kind IN ('state', 'oneshot', 'server')),
    state_key text,
    interface text NOT NULL CHECK (interface IN ('S', 'A', 'B')),
    status text NOT NULL DEFAULT 'QUEUED'
      CHECK (status IN ('QUEUED', 'SENT', 'DELIVERED', 'EXECUTED', 'FAILED', 'SUPERSEDED', 'CANCELLED', 'EXPIRED')),
    priority smallint NOT NULL DEFAULT 0,
    user_label text NOT NULL,
    user_id integer,
    key_id integer,
    batch_id bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    sent_at timestamptz,
    delivered_at timestamptz,
    completed_at timestamptz,
    expires_at timestamptz,
    result text
  )`,
  `CREATE INDEX commands_imei1 ON commands (imei1, id)`,
  `CREATE INDEX commands_pending ON commands (imei1, id) WHERE status IN ('QUEUED', 'SENT', 'DELIVERED')`,
  `CREATE INDEX commands_created_at ON commands (created_at)`,
  `CREATE INDEX commands_batch ON commands (batch_id) WHERE batch_id IS NOT NULL`,
];

/** Devices, their registration history, the financed-IMEI list, and the commands sent to them. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
