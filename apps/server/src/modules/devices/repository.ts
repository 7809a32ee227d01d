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

// ---- Device identity (migration 0010): nonces, re-registration requests, the IMEIs a device holds ----

/** Keeps a registration nonce (as its SHA-256) for `imei1` until `ttlMs` from now; drops expired ones. */
export async function insertNonce(db: Db, nonceHash: string, imei1: string, ttlMs: number): Promise<Date> {
  await db.deleteFrom('device_nonces').where('expires_at', '<', sql<Date>`now()`).execute();
  const row = await db
    .insertInto('device_nonces')
    .values({
      nonce_hash: nonceHash,
      imei1,
      expires_at: sql<Date>`now() + ${ttlMs} * interval '1 millisecond'` as unknown as Date,
    })
    .returning('expires_at')
    .executeTakeFirstOrThrow();
  return new Date(row.expires_at);
}

/** Uses up a nonce: true when it was issued for `imei1` and has not expired. A nonce works once. */
export async function consumeNonce(db: Db, nonceHash: string, imei1: string): Promise<boolean> {
  const row = await db
    .deleteFrom('device_nonces')
    .where('nonce_hash', '=', nonceHash)
    .returning(['imei1', sql<boolean>`expires_at > now()`.as('fresh')])
    .executeTakeFirst();
  return row !== undefined && row.imei1 === imei1 && row.fresh;
}

/** The devices other than `imei1` that hold any of `imeis` (in either slot). */
export async function otherHolders(db: Db, imei1: string, imeis: string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('device_imeis')
    .select(['imei', 'device'])
    .where('imei', 'in', imeis)
    .where('device', '<>', imei1)
    .execute();
  return rows.map((r) => r.imei);
}

/**
 * Uses up an operator's approval of a registration of `imei1`: the newest approved request still within
 * its window, whose claimed key (if it named one) is `publicKey`. Returns its id, or null.
 */
export async function useApproval(
  trx: Transaction<DB>,
  imei1: string,
  publicKey: string | null,
): Promise<number | null> {
  const row = await trx
    .updateTable('reregistration_requests')
    .set({ status: 'USED', used_at: sql<Date>`now()` as unknown as Date })
    .where(
      'id',
      '=',
      trx
        .selectFrom('reregistration_requests')
        .select('id')
        .where('imei1', '=', imei1)
        .where('status', '=', 'APPROVED')
        .where('approved_until', '>', sql<Date>`now()`)
        .where((eb) => eb.or([eb('public_key', 'is', null), eb('public_key', '=', publicKey)]))
        .orderBy('id', 'desc')
        .limit(1)
        .forUpdate(),
    )
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/**
 * Keeps a refused registration for an operator: a new request, or, when the same address claimed the
 * same key and profile before and it is still pending, one more attempt on that request.
 */
export async function recordReregistrationRequest(
  db: Db,
  request: { imei1: string; address: string; profile: Record<string, unknown>; publicKey: string | null },
): Promise<number> {
  const profile = JSON.stringify(request.profile);
  const again = await db
    .updateTable('reregistration_requests')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_attempt_at: sql<Date>`now()` as unknown as Date,
    }))
    .where('imei1', '=', request.imei1)
    .where('status', '=', 'PENDING')
    .where('address', '=', request.address)
    .where(sql<boolean>`public_key IS NOT DISTINCT FROM ${request.publicKey}`)
    .where(sql<boolean>`profile = ${profile}::jsonb`)
    .returning('id')
    .executeTakeFirst();
  if (again) return Number(again.id);
  const row = await db
    .insertInto('reregistration_requests')
    .values({
      imei1: request.imei1,
      address: request.address,
      profile,
      public_key: request.publicKey,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function reregistrationRequests(db: Db, imei1: string, limit = 20) {
  return db
    .selectFrom('reregistration_requests')
    .selectAll()
    .where('imei1', '=', imei1)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Decides a pending request; returns the request as it was, or undefined when none is pending. */
export async function decideReregistration(
  db: Db,
  id: number,
  decision: { status: 'APPROVED' | 'REJECTED'; by: string; windowMs: number },
) {
  return db
    .updateTable('reregistration_requests')
    .set({
      status: decision.status,
      decided_at: sql<Date>`now()` as unknown as Date,
      decided_by: decision.by,
      approved_until:
        decision.status === 'APPROVED'
          ? (sql<Date>`now() + ${decision.windowMs} * interval '1 millisecond'` as unknown as Date)
          : null,
    })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .returning(['id', 'imei1', 'address', 'profile', 'public_key', 'approved_until'])
    .executeTakeFirst();
}

export async function findReregistrationRequest(db: Db, id: number) {
  return db
    .selectFrom('reregistration_requests')
    .innerJoin('devices', 'devices.imei1', 'reregistration_requests.imei1')
    .select([
      'reregistration_requests.id',
      'reregistration_requests.imei1',
      'reregistration_requests.status',
      'devices.retailer_phone',
    ])
    .where('reregistration_requests.id', '=', id)
    .executeTakeFirst();
}

/**
 * The dashboard's charts of the last 30 days: registrations per day, commands by status, devices online.
 * With a retailer phone, only that retailer's registrations, devices and the commands sent to them.
 */
export async function dashboardCounts(db: Db, retailerPhone: string | null) {
  const ofRetailer = (column: string) =>
    retailerPhone === null ? sql`TRUE` : sql`${sql.ref(column)} = ${retailerPhone}`;
  const perDay = await sql<{ day: string; count: number }>`
    SELECT to_char(d.day, 'YYYY-MM-DD') AS day, count(r.id)::int AS count
    FROM generate_series(date_trunc('day', now()) - interval '29 days', date_trunc('day', now()), interval '1 day') AS d(day)
    LEFT JOIN registrations r ON r.created_at >= d.day AND r.created_at < d.day + interval '1 day'
      AND ${ofRetailer('r.retailer_phone')}
    GROUP BY d.day ORDER BY d.day`.execute(db);
  const byStatus = await db
    .selectFrom('commands')
    .select(['status', sql<number>`count(*)::int`.as('count')])
    .where('created_at', '>=', sql<Date>`now() - interval '30 days'`)
    .$if(retailerPhone !== null, (q) =>
      q.where(
        'imei1',
        'in',
        db
          .selectFrom('devices')
          .select('imei1')
          .where('retailer_phone', '=', retailerPhone ?? ''),
      ),
    )
    .groupBy('status')
    .orderBy('status')
    .execute();
  const devices = await db
    .selectFrom('devices')
    .select([
      sql<number>`count(*)::int`.as('total'),
      sql<number>`count(*) FILTER (WHERE online)::int`.as('online'),
    ])
    .$if(retailerPhone !== null, (q) => q.where('retailer_phone', '=', retailerPhone ?? ''))
    .executeTakeFirstOrThrow();
  return { perDay: perDay.rows, byStatus, devices };
}
