/** Per-device holds (`collection_holds`): no automated action for a held device. */
import { type Kysely, sql, type Transaction } from 'kysely';
import type { TenantScope } from '../../../authz/tenancy';
import type { DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export interface HoldRow {
  imei1: string;
  reason: string;
  held_by: string;
  held_at: Date;
  retailer_phone: string | null;
}

/** The holds of the scope's devices (the authority module's `scopeFor(…, 'collections')`). */
export async function listHolds(db: Db, { retailerPhone }: TenantScope): Promise<HoldRow[]> {
  let query = db
    .selectFrom('collection_holds as h')
    .leftJoin('devices as d', 'd.imei1', 'h.imei1')
    .select(['h.imei1', 'h.reason', 'h.held_by', 'h.held_at', 'd.retailer_phone'])
    .orderBy('h.held_at', 'desc')
    .limit(10_000);
  if (retailerPhone !== null) query = query.where('d.retailer_phone', '=', retailerPhone);
  return query.execute();
}

export async function upsertHold(
  trx: Transaction<DB>,
  values: { imei1: string; reason: string; heldBy: string; userId: number | null },
): Promise<Omit<HoldRow, 'retailer_phone'>> {
  return trx
    .insertInto('collection_holds')
    .values({
      imei1: values.imei1,
      reason: values.reason,
      held_by: values.heldBy,
      held_by_user_id: values.userId,
    })
    .onConflict((oc) =>
      oc.column('imei1').doUpdateSet({
        reason: values.reason,
        held_by: values.heldBy,
        held_by_user_id: values.userId,
        held_at: sql<Date>`now()`,
      }),
    )
    .returning(['imei1', 'reason', 'held_by', 'held_at'])
    .executeTakeFirstOrThrow();
}

export async function deleteHold(trx: Transaction<DB>, imei1: string): Promise<HoldRow | undefined> {
  const row = await trx
    .deleteFrom('collection_holds')
    .where('imei1', '=', imei1)
    .returning(['imei1', 'reason', 'held_by', 'held_at'])
    .executeTakeFirst();
  return row ? { ...row, retailer_phone: null } : undefined;
}
