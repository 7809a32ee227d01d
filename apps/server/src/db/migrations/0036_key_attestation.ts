/**
 * 0036: the verdict on a device key's attestation (docs/device-protocol.md §1), kept with the device so
 * Device Details shows it: `devices.key_attestation` is `{ passed, reasons, checkedAt }`, the reasons one
 * sentence per failed check (a chain not to the roots, software-level keys, an unlocked bootloader, a boot
 * that is not Verified, another app, a revoked certificate); null when no attestation was sent or checked.
 * Written with the key: a registration that keeps its enrolled key keeps its verdict.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`ALTER TABLE devices ADD COLUMN key_attestation jsonb`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
