/**
 * The audit report's sections as tables: one definition serves the screen, the print layout and the
 * xlsx download (one sheet per section). Pure, so it is unit-tested.
 */
import { type AuditResponse, displayCommand, neutraliseFormula } from '@lendlock/contract';
import { formatLocalDateTime } from '../../../lib/datetime';
import { isPendingStatus } from '../../Devices/commandStatus';
import { AUDIT_LABELS as L } from '../labels';

export type SectionKey = 'registration' | 'release' | 'deenroll' | 'commands';

export interface AuditTable {
  key: SectionKey;
  /** Heading on the screen. */
  title: string;
  /** Worksheet name (at most 31 characters, none of : \ / ? * [ ]). */
  sheet: string;
  header: string[];
  rows: string[][];
}

const when = (iso: string) => formatLocalDateTime(iso);
const text = (value: string | null | undefined) => value ?? '';

/** The four sections of spec §2 in order: registration, released, de-enroll/re-registration, commands. */
export function auditTables(audit: Omit<AuditResponse, 'status'>): AuditTable[] {
  return [
    {
      key: 'registration',
      title: L.registration,
      sheet: 'Registration Details',
      header: [
        L.imei1,
        L.imei2,
        L.matchStatus,
        L.registrationStatus,
        L.dateAndTime,
        L.manufacturer,
        L.brand,
        L.model,
        L.lastCommand,
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
      title: L.released,
      sheet: 'Released Details',
      header: [L.imei1, L.imei2, L.releasedBy, L.transactionId, L.createdAt],
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
      title: L.deenroll,
      sheet: 'De-enroll & Re-registration',
      header: [L.imei1, L.imei2, L.action, L.createdAt],
      rows: audit.deenroll.map((r) => [r.imei1, text(r.imei2), r.action, when(r.createdat)]),
    },
    {
      key: 'commands',
      title: L.commands,
      sheet: 'Executed Commands',
      header: [
        L.sno,
        L.dateAndTime,
        L.imei1,
        L.transactionId,
        L.interface,
        L.command,
        L.commandType,
        L.status,
        L.user,
        L.createdAt,
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

/** Whether a command still awaits the device's acknowledgement (the report then refreshes itself). */
export function hasPendingCommands(commands: readonly { status: string }[] | undefined): boolean {
  return commands?.some((command) => isPendingStatus(command.status)) ?? false;
}

/** The brand of the report's file name: the latest registration's, else the device's unknown. */
export function auditBrand(audit: Pick<AuditResponse, 'registration'>): string {
  const brand = audit.registration.find((r) => r.brand.trim() !== '')?.brand.trim() ?? 'Unknown';
  // Keep it a valid file name everywhere.
  return brand.replace(/[\\/:*?"<>|\s]+/g, '-');
}

/** Spec §9: `AuditReport_{brand}_imei-{imei}.xlsx`. */
export function auditFileName(brand: string, imei: string): string {
  return `AuditReport_${brand}_imei-${imei}.xlsx`;
}

/** The workbook's sheets: every cell a spreadsheet would read as a formula is neutralised. */
export function auditSheets(tables: readonly AuditTable[]): { name: string; rows: string[][] }[] {
  return tables.map((table) => ({
    name: table.sheet,
    rows: [table.header, ...table.rows].map((row) => row.map(neutraliseFormula)),
  }));
}
