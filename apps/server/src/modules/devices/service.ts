/**
 * The device service: reads about devices (the dashboard, device details, the audit report by IMEI, app
 * versions), the financed-IMEI list, and the devices' broker credentials the device channel checks.
 */
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
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { sha256Hex } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { toDeenrollRow, toDeviceRecord, toExecutedCommandRow, toRegistrationRow } from './mapper';
import {
  appVersionCounts,
  auditReportRows,
  credentialedDeviceCount,
  dashboardCounts,
  deviceCredentialHash,
  devicesByEitherImei,
  findDevice,
  homeCounts,
  importFinanced,
} from './repository';

/** The day `timeZone` is in now, and the last `days` days up to it as UTC instants (the contract's daysInZone). */
function lastDays(timeZone: string, days: number): { day: string; start: Date; end: Date }[] {
  const today = dayInTimeZone(timeZone) ?? new Date().toISOString().slice(0, 10);
  return Array.from({ length: days }, (_, i) => {
    const day = addDays(today, i - days + 1);
    return { day, ...daysInZone(day, day, timeZone) };
  });
}

/**
 * The audit report of a device `actor` may see; another tenant's device's is empty, as an unknown one's.
 * A function over the database too: the audit module's xlsx export reads it.
 */
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

/** Built by container.ts over the database. */
export class DeviceService {
  constructor(private readonly db: Kysely<DB>) {}

  /** The dashboard counts ("today" in `timeZone`) of the devices `actor` may see (a retailer: its own). */
  async homeData(actor: Principal, timeZone: string) {
    const [today] = lastDays(timeZone, 1);
    const row = await homeCounts(this.db, scopeFor(actor, 'devices'), today?.start ?? new Date());
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
  async dashboardCharts(actor: Principal, timeZone: string) {
    const { perDay, byStatus, devices } = await dashboardCounts(
      this.db,
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
  async deviceDetails(
    actor: Principal,
    imeis: string[],
  ): Promise<{ items: DeviceRecord[]; message?: string }> {
    const unique = [...new Set(imeis)];
    const rows = await devicesByEitherImei(this.db, unique, scopeFor(actor, 'devices'));
    const order = new Map(unique.map((imei, index) => [imei, index]));
    const position = (row: (typeof rows)[number]) =>
      Math.min(order.get(row.imei1) ?? Infinity, order.get(row.imei2 ?? '') ?? Infinity);
    const items = rows.sort((a, b) => position(a) - position(b)).map(toDeviceRecord);
    return items.length > 0
      ? { items }
      : { items, message: unique.length > 1 ? MESSAGES.noValidDeviceData : MESSAGES.noResults };
  }

  /** Enrolled devices per app version, of those `actor` may see. */
  async appVersions(actor: Principal) {
    const rows = await appVersionCounts(this.db, scopeFor(actor, 'devices'));
    return {
      status: 'success' as const,
      items: rows.map((r) => ({ appversion: r.appversion, devices: Number(r.devices) })),
    };
  }

  /**
   * Adds IMEIs to the financed list that decides Match_Status (devices already registered now match) and
   * writes the audit row, in one transaction. Returns how many were new.
   */
  async importFinancedImeis(
    actor: Principal,
    request: { imeis: string[]; source: string; address: string },
  ): Promise<number> {
    const { imeis, source } = request;
    return inTransaction(this.db, async (trx) => {
      const added = await importFinanced(trx, imeis, source);
      await appendAudit(trx, {
        actor,
        action: 'financed.import',
        address: request.address,
        result: 'success',
        details: { received: imeis.length, added, source },
      });
      return added;
    });
  }

  /** See `auditReport`. */
  auditReport(actor: Principal, imei: string): Promise<AuditResponse> {
    return auditReport(this.db, actor, imei);
  }

  /** Whether `credential` is the device's current broker credential (the device channel asks). */
  async credentialMatches(imei: string, credential: string): Promise<boolean> {
    return (await deviceCredentialHash(this.db, imei)) === sha256Hex(credential);
  }

  /** Whether the device still has a broker credential (it is enrolled). */
  async hasCredential(imei: string): Promise<boolean> {
    return (await deviceCredentialHash(this.db, imei)) !== null;
  }

  /** How many devices have a broker credential (they all reconnect after a restart). */
  credentialedCount(): Promise<number> {
    return credentialedDeviceCount(this.db);
  }
}
