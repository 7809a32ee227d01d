/** What the collections services share: who calls, a date as the API writes it, the devices a caller may read. */
import type { Kysely } from 'kysely';
import { mayIfFound } from '../../authz';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { findDevice } from '../devices/repository';

/** Who asks for a change, and from where (both are audited). */
export interface Caller {
  actor: Principal;
  address: string;
}

export const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

/** A device whose holds, releases or failures the caller may read (either IMEI), or null: none shown. */
export async function readableDevice(db: Kysely<DB>, actor: Principal, imei: string) {
  const device = await findDevice(db, imei);
  if (!mayIfFound(actor, 'collections', 'read', device, (x) => ({ retailerPhone: x.retailer_phone })))
    return null;
  return device;
}
