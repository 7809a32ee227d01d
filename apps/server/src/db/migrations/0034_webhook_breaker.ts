/**
 * 0034: webhook deliveries isolated per endpoint (docs/operations.md § Webhooks).
 *
 * - `webhook_endpoints` gets its circuit breaker, shared by every instance: `consecutive_failures` (failed
 *   attempts since the last success), `circuit_state` (`closed`: sent to; `open`: not attempted until
 *   `circuit_until`, then one trial; `half_open`: that trial is under way, leased until `circuit_until`).
 * - The worker claims each endpoint's oldest due deliveries on their own (a few per endpoint, so one slow
 *   endpoint cannot take every slot): a partial index by endpoint and due time.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE webhook_endpoints
    ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0,
    ADD COLUMN circuit_state text NOT NULL DEFAULT 'closed'
      CHECK (circuit_state IN ('closed', 'open', 'half_open')),
    ADD COLUMN circuit_until timestamptz`,
  `CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'PENDING'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
