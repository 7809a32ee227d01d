/**
 * The Audit Report By IMEI (spec §2) as tables: one definition for the screen, the print layout and the
 * xlsx download the server writes (`GET /api/v2/auditReport/export`, one sheet per section). Date-times
 * are shown in a time zone: the browser's own on the screen, the one the console sends with the download.
 */
import { z } from 'zod';
import type { AuditResponse } from './api/devices';
import { displayCommand } from './device';
import { COLUMN_LABELS as C } from './reports';

export type AuditSectionKey = 'registration' | 'release' | 'deenroll' | 'commands';

/** Headings of the report's four sections, in the spec's order. */
export const AUDIT_SECTION_TITLES: Readonly<Record<AuditSectionKey, string>> = {
  registration: 'Registration Details',
  release: 'Released Details',
  deenroll: 'De-enroll / Re-registration Details',
  commands: 'Executed Commands',
};

export interface AuditTable {
  key: AuditSectionKey;
  /** Heading on the screen. */
  title: string;
  /** Worksheet name (at most 31 characters, none of : \ / ? * [ ]). */
  sheet: string;
  header: string[];
  rows: string[][];
}

const text = (value: string | null | undefined) => value ?? '';

/**
 * The four sections of spec §2 in order: registration, released, de-enroll/re-registration, commands.
 * `when` formats an ISO date-time for a cell (formatDateTimeIn for the server, the browser's local time
 * for the screen).
 */
export function auditTables(
  audit: Omit<AuditResponse, 'status'>,
  when: (iso: string) => string,
): AuditTable[] {
  return [
    {
      key: 'registration',
      title: AUDIT_SECTION_TITLES.registration,
      sheet: 'Registration Details',
      header: [
        C.imei1,
        C.imei2,
        C.matchStatus,
        C.registrationStatus,
        C.dateAndTime,
        C.manufacturer,
        C.brand,
        C.model,
        C.lastCommand,
      ],
      rows: audit.registration.map((r) => [
        r.imei1,
        text(r.imei2),
        r.Match_Status,
        r.Registration_status,
        when(r.date_and_time),
        r.Manufacturer,
        r.brand,
        r.model,
        r.command ? displayCommand(r.command) : '',
      ]),
    },
    {
      key: 'release',
      title: AUDIT_SECTION_TITLES.release,
      sheet: 'Released Details',
      header: [C.imei1, C.imei2, C.releasedBy, C.transactionId, C.createdAt],
      rows: audit.release.map((r) => [
        r.imei1,
        text(r.imei2),
        r.user,
        text(r.transactionId),
        when(r.createdat),
      ]),
    },
    {
      key: 'deenroll',
      title: AUDIT_SECTION_TITLES.deenroll,
      sheet: 'De-enroll & Re-registration',
      header: [C.imei1, C.imei2, C.action, C.createdAt],
      rows: audit.deenroll.map((r) => [r.imei1, text(r.imei2), r.action, when(r.createdat)]),
    },
    {
      key: 'commands',
      title: AUDIT_SECTION_TITLES.commands,
      sheet: 'Executed Commands',
      header: [
        C.sno,
        C.dateAndTime,
        C.imei1,
        C.transactionId,
        C.interface,
        C.command,
        C.commandType,
        C.status,
        C.user,
        C.createdAt,
      ],
      rows: audit.commands.map((c, index) => [
        String(index + 1),
        when(c.date_and_time),
        c.imei1,
        c.transactionId,
        c.interface,
        displayCommand(c.command),
        c.commandType,
        c.status,
        c.user,
        when(c.createdat),
      ]),
    },
  ];
}

export function isAuditEmpty(audit: Omit<AuditResponse, 'status'>): boolean {
  return (
    audit.registration.length === 0 &&
    audit.release.length === 0 &&
    audit.deenroll.length === 0 &&
    audit.commands.length === 0
  );
}

/** The brand of the report's file name: the latest registration's, else `Unknown`; a valid file name. */
export function auditBrand(audit: Pick<AuditResponse, 'registration'>): string {
  const brand = audit.registration.find((r) => r.brand.trim() !== '')?.brand.trim() ?? 'Unknown';
  return brand.replace(/[\\/:*?"<>|\s]+/g, '-');
}

/** Spec §9: `AuditReport_{brand}_imei-{imei}.xlsx`. */
export function auditFileName(brand: string, imei: string): string {
  return `AuditReport_${brand}_imei-${imei}.xlsx`;
}

/** Whether `name` is a time zone this runtime knows (an IANA name such as `Asia/Kolkata`, or `UTC`). */
export function isTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** `YYYY-MM-DD HH:mm:ss` of an ISO date-time in `timeZone` (the screen's format); '' if unparseable. */
export function formatDateTimeIn(iso: string, timeZone: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  let format = formatters.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(timeZone, format);
  }
  const part = Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]));
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second}`;
}

/**
 * `GET /api/v2/auditReport/export?imei1=…&timeZone=…`: the report as an xlsx file. `timeZone` (the
 * browser's, `Intl.DateTimeFormat().resolvedOptions().timeZone`) formats the date-times as the screen
 * shows them; without it, the server's REPORT_TIME_ZONE.
 */
export const auditReportExportQuerySchema = z.object({
  imei1: z
    .string()
    .trim()
    .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number'),
  timeZone: z.string().trim().max(64).refine(isTimeZone, 'Unknown time zone.').optional(),
});
export type AuditReportExportQuery = z.infer<typeof auditReportExportQuerySchema>;
