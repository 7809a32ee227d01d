/**
 * 0027: the offline sweep's index no longer stops device updates from being HOT.
 *
 * 0021 indexed `devices (last_seen_at) WHERE NOT online` for the webhooks' device.offline sweep. Every
 * acknowledgement and presence update sets `last_seen_at`, and PostgreSQL makes an update HOT (no new
 * entry in every index of the table) only when no indexed column changes, whether or not the row is in the
 * partial index: the acknowledgement of each batch command became a full update of every device index,
 * and the 100,000-IMEI batch lost half its speed (bench/batch.ts: devices HOT 171,745 of 186,812 before,
 * 87,493 of 189,670 after). `offline_since` is written only when a device goes offline (and cleared when
 * it comes back), so the updates of a device that stays online keep being HOT.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE devices ADD COLUMN offline_since timestamptz DEFAULT now()`,
  `UPDATE devices SET offline_since = CASE WHEN online THEN NULL ELSE last_seen_at END`,
  `DROP INDEX devices_offline_since`,
  `CREATE INDEX devices_offline_since ON devices (offline_since) WHERE offline_since IS NOT NULL`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
