/** Reads about devices: the dashboard, device details, the audit report by IMEI, app versions. */
import { type AuditResponse, type DeviceRecord, MESSAGES } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import { precompiled } from '../../db/precompiled';
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import {
  REGISTRATION_COLUMNS,
  toDeenrollRow,
  toDeviceRecord,
  toExecutedCommandRow,
  toRegistrationRow,
} from './mapper';
import { dashboardCounts } from './repository';

const count = sql<number>`count(*)::int`;

/** The dashboard counts; a retailer user's count only that retailer's devices. */
export async function homeData(db: Kysely<DB>, retailerPhone: string | null = null) {
  const today = sql<Date>`date_trunc('day', now())`;
  const row =
    retailerPhone === null
      ? // Every device: the counters kept by triggers (migration 0007), 16 rows to add up, and today's
        // registrations (an index range), in one round trip.
        await db
          .selectFrom('device_counts')
          .select([
            sql<number>`coalesce(sum(total), 0)::int`.as('total_device'),
            sql<number>`coalesce(sum(deenrolled), 0)::int`.as('deenroll'),
            sql<number>`(SELECT count(*)::int FROM registrations WHERE created_at >= ${today})`.as(
              'device_today',
            ),
          ])
          .executeTakeFirstOrThrow()
      : // One retailer's devices: counted in the (retailer_phone, claimstatus) index.
        await db
          .selectFrom('devices')
          .where('retailer_phone', '=', retailerPhone)
          .select([
            count.as('total_device'),
            sql<number>`count(*) FILTER (WHERE claimstatus = 'DEENROLLED')::int`.as('deenroll'),
            sql<number>`(SELECT count(*)::int FROM registrations
              WHERE created_at >= ${today} AND retailer_phone = ${retailerPhone})`.as('device_today'),
          ])
          .executeTakeFirstOrThrow();
  return {
    status: 'success' as const,
    total_device: Number(row.total_device),
    device_today: Number(row.device_today),
    deenroll: Number(row.deenroll),
  };
}

/** The dashboard's charts; a retailer user's count only that retailer's devices, like homeData. */
export async function dashboardCharts(db: Kysely<DB>, retailerPhone: string | null = null) {
  const { perDay, byStatus, devices } = await dashboardCounts(db, retailerPhone);
  return {
    status: 'success' as const,
    registrationsPerDay: perDay.map((r) => ({ day: r.day, count: Number(r.count) })),
    commandsByStatus: byStatus.map((r) => ({ status: r.status, count: Number(r.count) })),
    devicesOnline: Number(devices.online),
    devicesTotal: Number(devices.total),
  };
}

/** Devices by either IMEI (an array parameter: one query text, so one prepared statement, for any count). */
const byEitherImei = (db: Kysely<DB>, imeis: string[]) =>
  db
    .selectFrom('devices')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('imei1', '=', sql<string>`ANY(${imeis}::text[])`),
        eb('imei2', '=', sql<string>`ANY(${imeis}::text[])`),
      ]),
    );
const devicesByImeis = precompiled((db, imeis: string[]) => byEitherImei(db, imeis));
const retailerDevicesByImeis = precompiled((db, imeis: string[], retailerPhone: string) =>
  byEitherImei(db, imeis).where('retailer_phone', '=', retailerPhone),
);

/** Devices by imei1 or imei2; a retailer user sees only that retailer's devices. */
export async function deviceDetails(
  db: Kysely<DB>,
  actor: Principal,
  imeis: string[],
): Promise<{ items: DeviceRecord[]; message?: string }> {
  const unique = [...new Set(imeis)];
  const rows = actor.retailerPhone
    ? await retailerDevicesByImeis(db, unique, actor.retailerPhone)
    : await devicesByImeis(db, unique);
  const order = new Map(unique.map((imei, index) => [imei, index]));
  const position = (row: (typeof rows)[number]) =>
    Math.min(order.get(row.imei1) ?? Infinity, order.get(row.imei2 ?? '') ?? Infinity);
  const items = rows.sort((a, b) => position(a) - position(b)).map(toDeviceRecord);
  return items.length > 0
    ? { items }
    : { items, message: unique.length > 1 ? MESSAGES.noValidDeviceData : MESSAGES.noResults };
}

export async function auditReport(db: Kysely<DB>, actor: Principal, imei: string): Promise<AuditResponse> {
  const device = await db
    .selectFrom('devices')
    .select(['imei1', 'retailer_phone'])
    .where((eb) => eb.or([eb('imei1', '=', imei), eb('imei2', '=', imei)]))
    .executeTakeFirst();
  const imei1 =
    device && (!actor.retailerPhone || device.retailer_phone === actor.retailerPhone) ? device.imei1 : null;
  if (!imei1) return { status: 'success', registration: [], release: [], commands: [], deenroll: [] };
  const [registration, release, commands, deenroll] = await Promise.all([
    db
      .selectFrom('registrations')
      .leftJoin('devices', 'devices.imei1', 'registrations.imei1')
      .select(REGISTRATION_COLUMNS)
      .where('registrations.imei1', '=', imei1)
      .orderBy('registrations.id', 'desc')
      .execute(),
    db.selectFrom('releases').selectAll().where('imei1', '=', imei1).orderBy('id', 'desc').execute(),
    db
      .selectFrom('commands')
      .select([
        'id',
        'transaction_id',
        'imei1',
        'command',
        'options',
        'interface',
        'status',
        'user_label',
        'created_at',
        'completed_at',
      ])
      .where('imei1', '=', imei1)
      .orderBy('id', 'desc')
      .limit(5000)
      .execute(),
    db.selectFrom('deenrollments').selectAll().where('imei1', '=', imei1).orderBy('id', 'desc').execute(),
  ]);
  return {
    status: 'success',
    registration: registration.map(toRegistrationRow),
    release: release.map((r) => ({
      imei1: r.imei1,
      imei2: r.imei2,
      user: r.released_by,
      transactionId: r.transaction_id,
      createdat: new Date(r.created_at).toISOString(),
    })),
    commands: commands.map(toExecutedCommandRow),
    deenroll: deenroll.map(toDeenrollRow),
  };
}

export async function appVersions(db: Kysely<DB>, retailerPhone: string | null = null) {
  const rows = await db
    .selectFrom('devices')
    .$if(retailerPhone !== null, (q) => q.where('retailer_phone', '=', retailerPhone ?? ''))
    .select(['appversion', count.as('devices')])
    .where('claimstatus', '=', 'ENROLLED')
    .groupBy('appversion')
    .orderBy('appversion', 'desc')
    .execute();
  return {
    status: 'success' as const,
    items: rows.map((r) => ({ appversion: r.appversion, devices: Number(r.devices) })),
  };
}
