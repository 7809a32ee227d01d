/** Reads about devices: the dashboard, device details, the audit report by IMEI, app versions. */
import {
  type AuditResponse,
  addDays,
  type DeviceRecord,
  dayInTimeZone,
  daysInZone,
  MESSAGES,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { mayIfFound, scopeFor } from '../../authz';
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import { toDeenrollRow, toDeviceRecord, toExecutedCommandRow, toRegistrationRow } from './mapper';
import {
  appVersionCounts,
  auditReportRows,
  dashboardCounts,
  devicesByEitherImei,
  findDevice,
  homeCounts,
} from './repository';

/** The day `timeZone` is in now, and the last `days` days up to it as UTC instants (the contract's daysInZone). */
function lastDays(timeZone: string, days: number): { day: string; start: Date; end: Date }[] {
  const today = dayInTimeZone(timeZone) ?? new Date().toISOString().slice(0, 10);
  return Array.from({ length: days }, (_, i) => {
    const day = addDays(today, i - days + 1);
    return { day, ...daysInZone(day, day, timeZone) };
  });
}

/** The dashboard counts ("today" in `timeZone`) of the devices `actor` may see (a retailer: its own). */
export async function homeData(db: Kysely<DB>, actor: Principal, timeZone: string) {
  const [today] = lastDays(timeZone, 1);
  const row = await homeCounts(db, scopeFor(actor, 'devices'), today?.start ?? new Date());
  return {
    status: 'success' as const,
    total_device: Number(row.total_device),
    device_today: Number(row.device_today),
    deenroll: Number(row.deenroll),
  };
}

/**
 * The dashboard's charts (registrations per day: the last 30 days in `timeZone`) of the devices `actor`
 * may see, like homeData.
 */
export async function dashboardCharts(db: Kysely<DB>, actor: Principal, timeZone: string) {
  const { perDay, byStatus, devices } = await dashboardCounts(
    db,
    scopeFor(actor, 'devices'),
    lastDays(timeZone, 30),
  );
  return {
    status: 'success' as const,
    registrationsPerDay: perDay.map((r) => ({ day: r.day, count: Number(r.count) })),
    commandsByStatus: byStatus.map((r) => ({ status: r.status, count: Number(r.count) })),
    devicesOnline: Number(devices.online),
    devicesTotal: Number(devices.total),
  };
}

/** Devices by imei1 or imei2, of those `actor` may see (a retailer: its own). */
export async function deviceDetails(
  db: Kysely<DB>,
  actor: Principal,
  imeis: string[],
): Promise<{ items: DeviceRecord[]; message?: string }> {
  const unique = [...new Set(imeis)];
  const rows = await devicesByEitherImei(db, unique, scopeFor(actor, 'devices'));
  const order = new Map(unique.map((imei, index) => [imei, index]));
  const position = (row: (typeof rows)[number]) =>
    Math.min(order.get(row.imei1) ?? Infinity, order.get(row.imei2 ?? '') ?? Infinity);
  const items = rows.sort((a, b) => position(a) - position(b)).map(toDeviceRecord);
  return items.length > 0
    ? { items }
    : { items, message: unique.length > 1 ? MESSAGES.noValidDeviceData : MESSAGES.noResults };
}

/** The audit report of a device `actor` may see; another tenant's device's is empty, as an unknown one's. */
export async function auditReport(db: Kysely<DB>, actor: Principal, imei: string): Promise<AuditResponse> {
  const device = await findDevice(db, imei);
  if (!mayIfFound(actor, 'devices', 'read', device, (x) => ({ retailerPhone: x.retailer_phone })))
    return { status: 'success', registration: [], release: [], commands: [], deenroll: [] };
  const { registration, release, commands, deenroll } = await auditReportRows(db, device.imei1);
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

/** Enrolled devices per app version, of those `actor` may see. */
export async function appVersions(db: Kysely<DB>, actor: Principal) {
  const rows = await appVersionCounts(db, scopeFor(actor, 'devices'));
  return {
    status: 'success' as const,
    items: rows.map((r) => ({ appversion: r.appversion, devices: Number(r.devices) })),
  };
}
