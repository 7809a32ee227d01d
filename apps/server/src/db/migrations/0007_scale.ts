import { type Kysely, sql } from 'kysely';

/**
 * What a million devices and a 100,000-row batch need (the figures are in docs/performance.md).
 *
 * 1. The dashboard's device counts (homeData.php) without counting a million rows per call: triggers keep
 * the number of devices and of de-enrolled devices in `device_counts`, in the same transaction as the
 * change, so the counts never drift. Writers add to one of 16 slots (chosen by their database
 * connection), so concurrent registrations do not queue on one hot row; a read sums the 16 rows.
 * Inserts and deletes are counted once per statement (transition tables), so a bulk import of a
 * million devices costs one counter update; a claim status change (de-enrollment, re-registration)
 * once per row that actually changes. A retailer user's counts come from an index on
 * (retailer_phone, claimstatus) instead.
 * 2. The device channel's sweep (every DISPATCH_INTERVAL) finds its work through partial indexes that
 *    hold only that work: commands QUEUED, commands SENT (by when, for the resend), and one-shots that
 *    can expire. Before, each sweep read every pending command: 90,000 of them during a big batch.
 * 3. Devices are updated often (desired state, reported state, last command; none indexed): pages keep
 *    15 % free so that these updates stay on their page (HOT) and touch none of the device indexes.
 *    This applies to pages written from now on (a VACUUM FULL applies it to older ones).
 */
const STATEMENTS = [
  `CREATE TABLE device_counts (
    slot smallint PRIMARY KEY,
    total bigint NOT NULL DEFAULT 0,
    deenrolled bigint NOT NULL DEFAULT 0
  )`,
  `INSERT INTO device_counts (slot) SELECT generate_series(0, 15)`,
  `UPDATE device_counts SET
     total = (SELECT count(*) FROM devices),
     deenrolled = (SELECT count(*) FROM devices WHERE claimstatus = 'DEENROLLED')
   WHERE slot = 0`,
  `CREATE FUNCTION device_counts_slot() RETURNS smallint LANGUAGE sql STABLE AS
    'SELECT (pg_backend_pid() % 16)::smallint'`,
  `CREATE FUNCTION device_counts_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE device_counts c SET total = c.total + n.total, deenrolled = c.deenrolled + n.deenrolled
     FROM (SELECT count(*) AS total, count(*) FILTER (WHERE claimstatus = 'DEENROLLED') AS deenrolled
           FROM inserted) n
     WHERE c.slot = device_counts_slot() AND n.total > 0;
     RETURN NULL;
   END $$`,
  `CREATE FUNCTION device_counts_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE device_counts c SET total = c.total - n.total, deenrolled = c.deenrolled - n.deenrolled
     FROM (SELECT count(*) AS total, count(*) FILTER (WHERE claimstatus = 'DEENROLLED') AS deenrolled
           FROM deleted) n
     WHERE c.slot = device_counts_slot() AND n.total > 0;
     RETURN NULL;
   END $$`,
  `CREATE FUNCTION device_counts_claim_changed() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE device_counts SET deenrolled = deenrolled
       + (CASE WHEN NEW.claimstatus = 'DEENROLLED' THEN 1 ELSE 0 END)
       - (CASE WHEN OLD.claimstatus = 'DEENROLLED' THEN 1 ELSE 0 END)
     WHERE slot = device_counts_slot();
     RETURN NULL;
   END $$`,
  `CREATE FUNCTION device_counts_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     UPDATE device_counts SET total = 0, deenrolled = 0;
     RETURN NULL;
   END $$`,
  `CREATE TRIGGER devices_counted_insert AFTER INSERT ON devices
     REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION device_counts_inserted()`,
  `CREATE TRIGGER devices_counted_delete AFTER DELETE ON devices
     REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION device_counts_deleted()`,
  `CREATE TRIGGER devices_counted_claim AFTER UPDATE OF claimstatus ON devices
     FOR EACH ROW WHEN (OLD.claimstatus IS DISTINCT FROM NEW.claimstatus)
     EXECUTE FUNCTION device_counts_claim_changed()`,
  `CREATE TRIGGER devices_counted_truncate AFTER TRUNCATE ON devices
     FOR EACH STATEMENT EXECUTE FUNCTION device_counts_truncated()`,
  // A retailer user's counts: an index-only count of that retailer's devices.
  `CREATE INDEX devices_retailer ON devices (retailer_phone, claimstatus) WHERE retailer_phone IS NOT NULL`,
  // 2. The sweep's work.
  `CREATE INDEX commands_queued ON commands (imei1) WHERE status = 'QUEUED'`,
  `CREATE INDEX commands_unacknowledged ON commands (sent_at) WHERE status = 'SENT'`,
  `CREATE INDEX commands_expiring ON commands (expires_at) WHERE status IN ('QUEUED', 'SENT') AND expires_at IS NOT NULL`,
  // 3. Room for HOT updates.
  `ALTER TABLE devices SET (fillfactor = 85)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  // The table is locked while it is counted, so no device is added in between and missed.
  await sql`LOCK TABLE devices IN SHARE ROW EXCLUSIVE MODE`.execute(db);
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
