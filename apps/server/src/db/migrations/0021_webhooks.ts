import { type Kysely, sql } from 'kysely';

/**
 * Webhooks (docs/operations.md § Webhooks).
 * - `webhook_endpoints`: where events go. `secret_sealed` is the Standard Webhooks signing secret, sealed
 *   like the server's other secrets (lib/secrets-at-rest); a retailer ADMIN's endpoint carries its
 *   `retailer_phone` and receives that retailer's devices' events only. Deleted endpoints stay (their
 *   deliveries are history) with `deleted_at`.
 * - `webhook_deliveries`: one row per event and endpoint, written in the transaction of what caused the
 *   event, sent by a worker on every instance (FOR UPDATE SKIP LOCKED under a lease), retried with
 *   exponential backoff and jitter until `give_up_at`. `message_id` is the `webhook-id` header: the same on
 *   every attempt (and a replay), so a receiver de-duplicates.
 * - `webhook_offline_notices`: the `last_seen_at` of each device whose device.offline event was emitted,
 *   so a device that stays offline is announced once per disconnection.
 */
const STATEMENTS = [
  `CREATE TABLE webhook_endpoints (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url text NOT NULL,
    description text NOT NULL DEFAULT '',
    events text[] NOT NULL,
    secret_sealed text NOT NULL,
    retailer_phone text,
    enabled boolean NOT NULL DEFAULT true,
    created_by text NOT NULL,
    created_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted_at timestamptz
  )`,
  `CREATE TABLE webhook_deliveries (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id),
    message_id text NOT NULL,
    event text NOT NULL,
    payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'PENDING' CHECK (status IN ('PENDING', 'DELIVERED', 'FAILED')),
    attempts integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    give_up_at timestamptz NOT NULL,
    last_status_code integer,
    last_error text,
    created_at timestamptz NOT NULL DEFAULT now(),
    delivered_at timestamptz
  )`,
  `CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'PENDING'`,
  `CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC)`,
  `CREATE TABLE webhook_offline_notices (
    imei1 text PRIMARY KEY,
    last_seen_at timestamptz NOT NULL
  )`,
  // The offline sweep reads only the devices that are offline, by when they were last seen.
  `CREATE INDEX devices_offline_since ON devices (last_seen_at) WHERE NOT online`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
