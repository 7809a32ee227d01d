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
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import { toDeenrollRow, toDeviceRecord, toExecutedCommandRow, toRegistrationRow } from './mapper';
import {
  appVersionCounts,
  auditReportRows,
  dashboardCounts,
  devicesByEitherImei,
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

/** The dashboard counts ("today" in `timeZone`); a retailer user's count only that retailer's devices. */
export async function homeData(db: Kysely<DB>, retailerPhone: string | null, timeZone: string) {
  const [today] = lastDays(timeZone, 1);
  const row = await homeCounts(db, retailerPhone, today?.start ?? new Date());
  return {
    status: 'success' as const,
    total_device: Number(row.total_device),
    device_today: Number(row.device_today),
    deenroll: Number(row.deenroll),
  };
}

/**
 * The dashboard's charts (registrations per day: the last 30 days in `timeZone`); a retailer user's count
 * only that retailer's devices, like homeData.
 */
export async function dashboardCharts(db: Kysely<DB>, retailerPhone: string | null, timeZone: string) {
  const { perDay, byStatus, devices } = await dashboardCounts(db, retailerPhone, lastDays(timeZone, 30));
  return {
    status: 'success' as const,
    registrationsPerDay: perDay.map((r) => ({ day: r.day, count: Number(r.count) })),
    commandsByStatus: byStatus.map((r) => ({ status: r.status, count: Number(r.count) })),
    devicesOnline: Number(devices.online),
    devicesTotal: Number(devices.total),
  };
}

/** Devices by imei1 or imei2; a retailer user sees only that retailer's devices. */
export async function deviceDetails(
  db: Kysely<DB>,
  actor: Principal,
  imeis: string[],
): Promise<{ items: DeviceRecord[]; message?: string }> {
  const unique = [...new Set(imeis)];
  const rows = await devicesByEitherImei(db, unique, actor.retailerPhone ?? null);
  const order = new Map(unique.map((imei, index) => [imei, index]));
  const position = (row: (typeof rows)[number]) =>
    Math.min(order.get(row.imei1) ?? Infinity, order.get(row.imei2 ?? '') ?? Infinity);
  const items = rows.sort((a, b) => position(a) - position(b)).map(toDeviceRecord);
  return items.length > 0
    ? { items }
    : { items, message: unique.length > 1 ? MESSAGES.noValidDeviceData : MESSAGES.noResults };
}

export async function auditReport(db: Kysely<DB>, actor: Principal, imei: string): Promise<AuditResponse> {
  const rows = await auditReportRows(db, imei, actor.retailerPhone ?? null);
  if (!rows) return { status: 'success', registration: [], release: [], commands: [], deenroll: [] };
  const { registration, release, commands, deenroll } = rows;
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
  const rows = await appVersionCounts(db, retailerPhone);
  return {
    status: 'success' as const,
    items: rows.map((r) => ({ appversion: r.appversion, devices: Number(r.devices) })),
  };
}
