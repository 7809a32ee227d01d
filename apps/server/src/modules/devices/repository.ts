import type { DeviceState } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { DB, DeviceRow } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

/** A device by either of its IMEIs. */
export async function findDevice(db: Db, imei: string): Promise<DeviceRow | undefined> {
  return db
    .selectFrom('devices')
    .selectAll()
    .where((eb) => eb.or([eb('imei1', '=', imei), eb('imei2', '=', imei)]))
    .orderBy(sql`imei1 = ${imei}`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function lockDevice(trx: Transaction<DB>, imei1: string): Promise<DeviceRow | undefined> {
  return trx.selectFrom('devices').selectAll().where('imei1', '=', imei1).forUpdate().executeTakeFirst();
}

export async function isFinanced(db: Db, imeis: string[]): Promise<boolean> {
  const row = await db
    .selectFrom('financed_imeis')
    .select('imei')
    .where('imei', 'in', imeis)
    .executeTakeFirst();
  return row !== undefined;
}

export async function importFinanced(db: Db, imeis: string[], source: string): Promise<number> {
  let added = 0;
  for (let i = 0; i < imeis.length; i += 1000) {
    const chunk = imeis.slice(i, i + 1000);
    const result = await db
      .insertInto('financed_imeis')
      .values(chunk.map((imei) => ({ imei, source })))
      .onConflict((oc) => oc.column('imei').doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  // Devices already registered now match.
  await db
    .updateTable('devices')
    .set({ match_status: 'YES' })
    .where('match_status', '=', 'NO')
    .where((eb) => eb.or([eb('imei1', 'in', imeis), eb('imei2', 'in', imeis)]))
    .execute();
  return added;
}

export async function setOnline(db: Db, imei1: string, online: boolean): Promise<void> {
  await db
    .updateTable('devices')
    .set({ online, last_seen_at: sql<Date>`now()` as unknown as Date })
    .where('imei1', '=', imei1)
    .execute();
}

export async function setReportedState(
  db: Db,
  imei1: string,
  state: DeviceState,
  appversion?: string,
): Promise<void> {
  await db
    .updateTable('devices')
    .set({
      reported_state: JSON.stringify(state),
      last_seen_at: sql<Date>`now()` as unknown as Date,
      ...(appversion ? { appversion } : {}),
    })
    .where('imei1', '=', imei1)
    .execute();
}

export async function deviceCredentialHash(db: Db, imei1: string): Promise<string | null> {
  const row = await db
    .selectFrom('devices')
    .select('credential_hash')
    .where('imei1', '=', imei1)
    .where('claimstatus', '!=', 'DEENROLLED')
    .executeTakeFirst();
  return row?.credential_hash ?? null;
}
