import { type Kysely, sql } from 'kysely';

/**
 * Device identity (docs/device-protocol.md §1): a phone is who it says it is.
 * - `devices.public_key`: the device key (EC P-256, SPKI DER in base64) the agent enrolled with; a
 *   registration of an enrolled IMEI must be signed by it, or approved by an operator.
 * - `devices.key_security_level`: where an Android key attestation says the key lives (Software,
 *   TrustedEnvironment, StrongBox), or null when the key was not attested.
 * - `device_imeis`: every IMEI of every device, one row each, so one IMEI belongs to one device in either
 *   slot. A trigger keeps it in step with `devices`; its primary key is what refuses a second holder.
 *   Before this, imei2 was unique nowhere: a phone could claim another's second IMEI as its first.
 *   A database that already holds such a pair keeps the first device's claim; the later device's imei2
 *   is cleared and the clearing written to the audit log.
 * - `device_nonces`: single-use, short-lived challenges for a registration, bound to one IMEI (stored
 *   as their SHA-256).
 * - `reregistration_requests`: registrations of an enrolled IMEI refused for want of proof, kept for an
 *   operator to approve (one registration within a window) or reject.
 * - `enrollment_secrets`: several named secrets, stored as their SHA-256, each with an optional expiry,
 *   revocable. The one secret generated into `settings` before moves here as `default`.
 */
const STATEMENTS = [
  `ALTER TABLE devices ADD COLUMN public_key text`,
  `ALTER TABLE devices ADD COLUMN key_security_level text
     CHECK (key_security_level IN ('Software', 'TrustedEnvironment', 'StrongBox'))`,
  `ALTER TABLE devices ADD COLUMN key_enrolled_at timestamptz`,
  `CREATE TABLE device_imeis (
    imei text PRIMARY KEY,
    device text NOT NULL REFERENCES devices (imei1) ON DELETE CASCADE
  )`,
  `CREATE INDEX device_imeis_device ON device_imeis (device)`,
  // An IMEI held twice today: the device registered first keeps it.
  `WITH clashing AS (
     SELECT d.imei1, d.imei2 FROM devices d
     WHERE d.imei2 IS NOT NULL AND (d.imei2 = d.imei1 OR EXISTS (
       SELECT 1 FROM devices o WHERE o.imei1 <> d.imei1 AND (o.imei1 = d.imei2
         OR (o.imei2 = d.imei2 AND (o.created_at, o.imei1) < (d.created_at, d.imei1)))))
   ), logged AS (
     INSERT INTO audit_log (actor, action, target, result, details)
     SELECT 'system', 'device.imei2.cleared', imei1, 'success',
            jsonb_build_object('imei2', imei2, 'reason', 'held by another device (migration 0010)')
     FROM clashing RETURNING target
   )
   UPDATE devices SET imei2 = NULL WHERE imei1 IN (SELECT target FROM logged)`,
  `INSERT INTO device_imeis (imei, device) SELECT imei1, imei1 FROM devices`,
  `INSERT INTO device_imeis (imei, device) SELECT imei2, imei1 FROM devices WHERE imei2 IS NOT NULL`,
  `CREATE FUNCTION devices_sync_imeis() RETURNS trigger LANGUAGE plpgsql AS $$
   BEGIN
     IF TG_OP = 'UPDATE' THEN
       IF NEW.imei2 IS NOT DISTINCT FROM OLD.imei2 THEN RETURN NEW; END IF;
       IF OLD.imei2 IS NOT NULL THEN
         DELETE FROM device_imeis WHERE imei = OLD.imei2 AND device = OLD.imei1;
       END IF;
     ELSE
       INSERT INTO device_imeis (imei, device) VALUES (NEW.imei1, NEW.imei1);
     END IF;
     IF NEW.imei2 IS NOT NULL THEN
       INSERT INTO device_imeis (imei, device) VALUES (NEW.imei2, NEW.imei1);
     END IF;
     RETURN NEW;
   END $$`,
  `CREATE TRIGGER devices_sync_imeis AFTER INSERT OR UPDATE OF imei2 ON devices
     FOR EACH ROW EXECUTE FUNCTION devices_sync_imeis()`,
  `CREATE TABLE device_nonces (
    nonce_hash text PRIMARY KEY,
    imei1 text NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE INDEX device_nonces_expires_at ON device_nonces (expires_at)`,
  `CREATE TABLE reregistration_requests (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    imei1 text NOT NULL REFERENCES devices (imei1) ON DELETE CASCADE,
    status text NOT NULL DEFAULT 'PENDING'
      CHECK (status IN ('PENDING', 'APPROVED', 'REJECTED', 'USED')),
    address text,
    profile jsonb NOT NULL,
    public_key text,
    attempts integer NOT NULL DEFAULT 1,
    created_at timestamptz NOT NULL DEFAULT now(),
    last_attempt_at timestamptz NOT NULL DEFAULT now(),
    decided_at timestamptz,
    decided_by text,
    approved_until timestamptz,
    used_at timestamptz
  )`,
  `CREATE INDEX reregistration_requests_imei1 ON reregistration_requests (imei1, id DESC)`,
  `CREATE TABLE enrollment_secrets (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name text NOT NULL,
    secret_hash text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text NOT NULL,
    expires_at timestamptz,
    revoked_at timestamptz,
    revoked_by text,
    last_used_at timestamptz
  )`,
  `CREATE UNIQUE INDEX enrollment_secrets_active_name ON enrollment_secrets (name) WHERE revoked_at IS NULL`,
  `INSERT INTO enrollment_secrets (name, secret_hash, created_by)
   SELECT 'default', encode(sha256(convert_to(value, 'UTF8')), 'hex'), 'system'
   FROM settings WHERE key = 'enrollment_secret'`,
  `DELETE FROM settings WHERE key = 'enrollment_secret'`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
