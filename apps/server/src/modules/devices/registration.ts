/**
 * Device registration over HTTPS (design.md §4): the enrollment secret admits the agent, which receives
 * its own MQTT credential (stored hashed). Registration decides Match_Status from the financed-IMEI list;
 * a device seen before registers again as a re-registration (a de-enrolled one gets a record of it).
 */
import { timingSafeEqual } from 'node:crypto';
import { type DeviceRegistration, INITIAL_DEVICE_STATE } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import { inTransaction } from '../../db/transaction';
import type { DB, RegistrationStatus } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import { AppError } from '../../plugins/errors';
import { recordFailures, throttledError, throttledKeys } from '../auth/repository';
import { isFinanced, lockDevice } from './repository';

export function secretMatches(expected: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(sha256Hex(expected));
  const b = Buffer.from(sha256Hex(given));
  return timingSafeEqual(a, b);
}

export const REGISTRATION_MESSAGES = {
  badSecret: 'Unknown enrollment secret',
  throttled: (minutes: number) =>
    `Too many registrations with a wrong enrollment secret from this address. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
} as const;

export async function registerDevice(
  db: Kysely<DB>,
  input: DeviceRegistration,
): Promise<{ credential: string; registrationstatus: RegistrationStatus }> {
  const credential = randomSecret(24);
  const imei2 = input.imei2 || null;
  return inTransaction(db, async (trx) => {
    // Serialise registrations of one device.
    await sql`SELECT pg_advisory_xact_lock(hashtext(${input.imei1}))`.execute(trx);
    const existing = await lockDevice(trx, input.imei1);
    const match = (await isFinanced(trx, imei2 ? [input.imei1, imei2] : [input.imei1])) ? 'YES' : 'NO';
    const registrationstatus: RegistrationStatus = existing ? 'RE-REGISTERED' : 'REGISTERED';
    const fields = {
      imei2,
      manufacturer: input.manufacturer,
      brand: input.brand,
      model: input.model,
      appversion: input.appversion,
      apptype: input.apptype,
      // A re-registration that does not name a retailer keeps the one the device had.
      retailer_phone: input.retailer_phone ?? existing?.retailer_phone ?? null,
      match_status: match as 'YES' | 'NO',
      credential_hash: sha256Hex(credential),
    };
    if (!existing) {
      await trx
        .insertInto('devices')
        .values({ imei1: input.imei1, ...fields })
        .execute();
    } else {
      await trx
        .updateTable('devices')
        .set({
          ...fields,
          claimstatus: 'ENROLLED',
          registrationstatus,
          registered_at: sql<Date>`now()` as unknown as Date,
          online: false,
          // A released phone registering again starts a new financing: nothing carries over. Otherwise the
          // desired state stays (a formatted, locked phone is locked again once its agent is back).
          ...(existing.claimstatus === 'RELEASED'
            ? { desired_state: JSON.stringify(INITIAL_DEVICE_STATE) }
            : {}),
        })
        .where('imei1', '=', input.imei1)
        .execute();
      if (existing.claimstatus === 'DEENROLLED') {
        await trx
          .insertInto('deenrollments')
          .values({ imei1: input.imei1, imei2, action: 'RE-REGISTERED' })
          .execute();
      }
    }
    await trx
      .insertInto('registrations')
      .values({
        imei1: input.imei1,
        imei2,
        match_status: match,
        registration_status: registrationstatus,
        manufacturer: input.manufacturer,
        brand: input.brand,
        model: input.model,
        appversion: input.appversion,
        apptype: input.apptype,
        retailer_phone: input.retailer_phone ?? null,
      })
      .execute();
    return { credential, registrationstatus };
  });
}

/**
 * Admits a registration by its enrollment secret. Wrong secrets are counted per address, as failed
 * sign-ins are (the same table, window and per-address limit): after `maxFailures` in the window the
 * address is refused with 429 and Retry-After until the window ends, right secret or not, so the secret
 * cannot be guessed by trying.
 */
export async function admitRegistration(
  db: Kysely<DB>,
  expected: string,
  given: string | undefined,
  address: string,
  limit: { maxFailures: number; windowMs: number },
): Promise<void> {
  const key = `enroll-addr:${address}`;
  const [blocked] = await throttledKeys(db, [{ key, max: limit.maxFailures }], limit.windowMs);
  if (blocked) throw throttledError(blocked.retryAfterMs, REGISTRATION_MESSAGES.throttled);
  if (!secretMatches(expected, given)) {
    await recordFailures(db, [key], limit.windowMs);
    throw new AppError(401, 'UNAUTHENTICATED', REGISTRATION_MESSAGES.badSecret);
  }
}
