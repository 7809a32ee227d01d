/**
 * The Audit Report By IMEI as tables: one definition for the screen, the print layout and the
 * xlsx download the server writes (`GET /api/v2/auditReport/export`, one sheet per section). Date-times
 * are shown in a time zone: the browser's own on the screen, the one the console sends with the download.
 */
import { z } from 'zod';
import type { AuditResponse } from './api/devices';
import { timeZoneSchema } from './dates';
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

export interface AuditTable<Cell = string> {
  key: AuditSectionKey;
  /** Heading on the screen. */
  title: string;
  /** Worksheet name (at most 31 characters, none of : \ / ? * [ ]). */
  sheet: string;
  header: string[];
  /** Texts, and the cells `when` and `count` make (text on the screen; date and number cells in the xlsx). */
  rows: (string | Cell)[][];
}

const text = (value: string | null | undefined) => value ?? '';

/**
 * The report's four sections in order: registration, released, de-enroll/re-registration, commands.
 * `when` makes the cell of an ISO date-time (the browser's local time on the screen, a date cell in the
 * operator's time zone in the server's xlsx) and `count` that of the S.No. (text, or a number cell).
 */
export function auditTables<Cell = string>(
  audit: Omit<AuditResponse, 'status'>,
  when: (iso: string) => Cell | string,
  count: (n: number) => Cell | string = String,
): AuditTable<Cell>[] {
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
        count(index + 1),
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

/** The download's name: `AuditReport_{brand}_imei-{imei}.xlsx`. */
export function auditFileName(brand: string, imei: string): string {
  return `AuditReport_${brand}_imei-${imei}.xlsx`;
}

/**
 * `GET /api/v2/auditReport/export?imei1=…&timeZone=…`: the report as an xlsx file, its date-times (date
 * cells) in `timeZone`, the console's, as the screen shows them; without it, the server's REPORT_TIMEZONE.
 */
export const auditReportExportQuerySchema = z.object({
  imei1: z
    .string()
    .trim()
    .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number'),
  timeZone: timeZoneSchema.optional(),
});
export type AuditReportExportQuery = z.infer<typeof auditReportExportQuerySchema>;
