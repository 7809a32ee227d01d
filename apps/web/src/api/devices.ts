/**
 * Device reads (homeData, devicedetails, auditReportByImei, getAppVersionDevices) and the
 * `/api/v2/` calls beside them: dashboard charts, a device's pending commands and their cancellation.
 * Query keys name every parameter a fetch uses.
 */
import {
  appVersionResponseSchema,
  auditResponseSchema,
  type DeviceRecord,
  dashboardChartsSchema,
  decideReregistrationResponseSchema,
  deviceDetailsResponseSchema,
  deviceIdentityResponseSchema,
  homeDataResponseSchema,
  MESSAGES,
  pendingCommandsResponseSchema,
  statusMessageSchema,
} from '@lendlock/contract';
import type { ApiCallOptions, ApiClient, DownloadedFile, FileCallOptions } from './client';
import { withTimeZone } from './timeZone';

/**
 * The client sends `v2/…` scripts without `.php` (see `scriptPath` in client.ts).
 */
const v2 = (name: string) => `v2/${name}`;

/** Most IMEIs `devicedetails.php` takes in one `imeis` list. */
export const DEVICE_DETAILS_MAX_IMEIS = 10_000;

export const deviceKeys = {
  all: ['devices'] as const,
  homeData: () => [...deviceKeys.all, 'homeData'] as const,
  dashboardCharts: () => [...deviceKeys.all, 'dashboardCharts'] as const,
  details: (imei: string) => [...deviceKeys.all, 'details', { imei }] as const,
  audit: (imei: string) => [...deviceKeys.all, 'audit', { imei }] as const,
  appVersions: () => [...deviceKeys.all, 'appVersions'] as const,
  pendingCommands: (imei: string) => [...deviceKeys.all, 'pendingCommands', { imei }] as const,
  identity: (imei: string) => [...deviceKeys.all, 'identity', { imei }] as const,
};

type Signal = Pick<ApiCallOptions<unknown>, 'signal'>;

/** `?timeZone=…`: the browser's zone, whose days the dashboard counts (timeZone.ts), or nothing. */
function zoneQuery(): string {
  const search = new URLSearchParams(withTimeZone({})).toString();
  return search ? `?${search}` : '';
}

export function fetchHomeData(api: ApiClient, options: Signal = {}) {
  return api.call(`homeData${zoneQuery()}`, {
    ...options,
    method: 'GET',
    parse: (b) => homeDataResponseSchema.parse(b),
  });
}

export function fetchDashboardCharts(api: ApiClient, options: Signal = {}) {
  return api.call(`${v2('dashboard')}${zoneQuery()}`, {
    ...options,
    method: 'GET',
    parse: (b) => dashboardChartsSchema.parse(b),
  });
}

/** One IMEI (imei1 or imei2): `{items, message}`, message 'No results found' when there is none. */
export function fetchDeviceDetails(api: ApiClient, imei: string, options: Signal = {}) {
  return api.call('devicedetails', {
    ...options,
    body: { imei },
    parse: (b) => deviceDetailsResponseSchema.parse(b),
  });
}

/** The devices of an uploaded IMEI list, and the uploaded IMEIs no device the user sees has. */
export interface DevicesForImeis {
  items: DeviceRecord[];
  /** Uploaded IMEIs (each once, in file order) that are neither an imei1 nor an imei2 of a device found. */
  notFound: string[];
  message?: string;
}

/**
 * The devices of an uploaded IMEI list (Device Details batch, Last Command Reports), asked in lists of at
 * most 10,000, in file order, each device once, with the IMEIs not found (listed, not left
 * out). Message 'No valid device data found for uploaded IMEIs.' when none is found.
 */
export async function fetchDevicesForImeis(
  api: ApiClient,
  imeis: readonly string[],
  options: Signal = {},
): Promise<DevicesForImeis> {
  const unique = [...new Set(imeis)];
  const seen = new Set<string>();
  const items: DeviceRecord[] = [];
  const known = new Set<string>();
  for (let start = 0; start < unique.length; start += DEVICE_DETAILS_MAX_IMEIS) {
    const chunk = unique.slice(start, start + DEVICE_DETAILS_MAX_IMEIS);
    const answer = await api.call('devicedetails', {
      ...options,
      body: { imeis: chunk },
      parse: (b) => deviceDetailsResponseSchema.parse(b),
    });
    for (const item of answer.items) {
      known.add(item.imei1);
      if (item.imei2) known.add(item.imei2);
      if (seen.has(item.imei1)) continue;
      seen.add(item.imei1);
      items.push(item);
    }
  }
  const notFound = unique.filter((imei) => !known.has(imei));
  return items.length > 0 ? { items, notFound } : { items, notFound, message: MESSAGES.noValidDeviceData };
}

export function fetchAuditReport(api: ApiClient, imei: string, options: Signal = {}) {
  return api.call('auditReportByImei', {
    ...options,
    body: { imei1: imei },
    parse: (b) => auditResponseSchema.parse(b),
  });
}

/**
 * The Audit Report By IMEI as the xlsx file the server writes (`GET /api/v2/auditReport/export`), its
 * date cells in the browser's time zone (timeZone.ts: the file reads as the screen), saved under the
 * server's name `AuditReport_{brand}_imei-{imei}.xlsx` (`fallbackName` when the header is missing).
 */
export function exportAuditReport(
  api: ApiClient,
  request: { imei: string; fallbackName: string },
  options: Omit<FileCallOptions, 'fallbackName'> = {},
): Promise<DownloadedFile> {
  const search = new URLSearchParams(withTimeZone({ imei1: request.imei }));
  return api.file(`v2/auditReport/export?${search}`, { ...options, fallbackName: request.fallbackName });
}

export function fetchAppVersions(api: ApiClient, options: Signal = {}) {
  return api.call('getAppVersionDevices', {
    ...options,
    body: {},
    parse: (b) => appVersionResponseSchema.parse(b),
  });
}

/** A device's commands not yet acknowledged by it (QUEUED, SENT, DELIVERED). */
export function fetchPendingCommands(api: ApiClient, imei: string, options: Signal = {}) {
  return api.call(v2('pendingCommands'), {
    ...options,
    body: { imei },
    parse: (b) => pendingCommandsResponseSchema.parse(b),
  });
}

/** Cancels a pending command; a command already sent answers 409 with the server's message. */
export function cancelCommand(api: ApiClient, transactionId: string) {
  return api.call(v2('cancelCommand'), {
    body: { transactionId },
    parse: (b) => statusMessageSchema.parse(b),
  });
}

/**
 * The device's identity: the device key it enrolled (and its attested security level), and the
 * registrations of its IMEI refused for want of proof (re-registration requests). 404 'No results found'
 * for a device the user does not see.
 */
export function fetchDeviceIdentity(api: ApiClient, imei: string, options: Signal = {}) {
  return api.call(v2('deviceIdentity'), {
    ...options,
    body: { imei },
    parse: (b) => deviceIdentityResponseSchema.parse(b),
  });
}

export type ReregistrationDecision = 'approve' | 'reject';

/**
 * Approves (the device may then register once within the window) or rejects a pending re-registration
 * request (ADMIN, SUPERADMIN); one already decided answers 409 with the server's message.
 */
export function decideReregistration(api: ApiClient, id: number, decision: ReregistrationDecision) {
  return api.call(v2('reregistration/decide'), {
    body: { id, decision },
    parse: (b) => decideReregistrationResponseSchema.parse(b),
  });
}
