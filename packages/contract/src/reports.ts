/**
 * The Reports / Bulk Upload History Details screen's tabs and the export file names. The server's
 * downloadReports.php and exports and the console's tabs all read this table.
 */
import { z } from 'zod';
import { DATE_MESSAGES, hasDayShape, parseDay, timeZoneSchema } from './dates';
import type { RawCommand } from './device';
import { MESSAGES } from './messages';

/**
 * Column headings of the device, report and audit tables and of the xlsx exports: the
 * console's tables and the server's files read the same texts.
 */
export const COLUMN_LABELS = {
  sno: 'S.No.',
  id: 'Id',
  action: 'Action',
  imei1: 'IMEI 1',
  imei2: 'IMEI 2',
  matchStatus: 'Match Status',
  registrationStatus: 'Registration Status',
  dateAndTime: 'Date and Time',
  manufacturer: 'Manufacturer',
  brand: 'Brand',
  model: 'Model',
  lastCommand: 'Last Command',
  createdAt: 'Created At',
  releasedBy: 'Released By',
  transactionId: 'Transaction Id',
  interface: 'Interface',
  command: 'Command',
  commandType: 'Command Type',
  status: 'Status',
  user: 'User',
  file: 'File',
  oldFile: 'Old File',
  isComplete: 'Is Complete',
  lastImei: 'Last IMEI',
  remarks: 'Remarks',
} as const;

export type ReportKind = 'registration' | 'deenroll' | 'command';

export interface ReportTab {
  /** The `report` value sent to downloadReports.php. */
  readonly report: string;
  readonly label: string;
  readonly kind: ReportKind;
  /** Batch progress key of the command's bulk uploads. */
  readonly statusOf?: string;
  /** Raw commands whose executed rows the tab lists. */
  readonly commands?: readonly RawCommand[];
}

export const REPORT_TABS = [
  { report: 'registration', label: 'Registrations', kind: 'registration' },
  { report: 'deenroll', label: 'De-enrollment/Re-registery Records', kind: 'deenroll' },
  {
    report: 'notification',
    label: 'Enable Notification History',
    kind: 'command',
    statusOf: 'notifyfiles',
    commands: ['NOTIFY'],
  },
  {
    report: 'setwallpaper',
    label: 'Set Wallpaper',
    kind: 'command',
    statusOf: 'setWallpaperfiles',
    commands: ['LOCKWALLPAPER'],
  },
  {
    report: 'removewallpaper',
    label: 'Remove Wallpaper',
    kind: 'command',
    statusOf: 'removewallpaperfiles',
    commands: ['UNLOCKWALLPAPER'],
  },
  {
    report: 'activatealarm',
    label: 'Activate Alarm',
    kind: 'command',
    statusOf: 'activatealarmfiles',
    commands: ['SETALARM'],
  },
  {
    report: 'deactivatealarm',
    label: 'Deactivate Alarm',
    kind: 'command',
    statusOf: 'deactivatealarmfiles',
    commands: ['UNSETALARM'],
  },
  {
    report: 'disableapp',
    label: 'Disable App',
    kind: 'command',
    statusOf: 'disableappfiles',
    commands: ['GREYAPP'],
  },
  {
    report: 'restoreapp',
    label: 'Restore App',
    kind: 'command',
    statusOf: 'restoreappfiles',
    commands: ['UNGREYAPP'],
  },
  {
    report: 'disablecamera',
    label: 'Disable Camera',
    kind: 'command',
    statusOf: 'disablecamerafiles',
    commands: ['DISABLECAMERA'],
  },
  {
    report: 'enablecamera',
    label: 'Enable Camera',
    kind: 'command',
    statusOf: 'enablecamerafiles',
    commands: ['ENABLECAMERA'],
  },
  {
    report: 'release',
    label: 'Release Device History',
    kind: 'command',
    statusOf: 'releasefiles',
    commands: ['RELEASE'],
  },
] as const satisfies readonly ReportTab[];

export type ReportName = (typeof REPORT_TABS)[number]['report'];

export function reportTab(report: string): ReportTab | undefined {
  return (REPORT_TABS as readonly ReportTab[]).find((t) => t.report === report);
}

/** The registration filter: All, Matched, Unmatched (sent as ALL, YES, NO). */
export const REGISTRATION_FILTERS = [
  { value: 'ALL', label: 'All', file: 'All' },
  { value: 'YES', label: 'Matched', file: 'Matched' },
  { value: 'NO', label: 'Unmatched', file: 'Unmatched' },
] as const;
export type RegistrationFilter = (typeof REGISTRATION_FILTERS)[number]['value'];

/** Which rows an export holds: the tab's main rows, or its executed commands. */
export type ExportPart = 'items' | 'commands';

/** The export's download name. */
export function exportFileName(
  report: string,
  part: ExportPart,
  from: string,
  to: string,
  match?: string,
): string {
  const tab = reportTab(report);
  if (part === 'commands') return `report-${from}-${to}.xlsx`;
  if (tab?.kind === 'registration') {
    const filter = REGISTRATION_FILTERS.find((f) => f.value === match) ?? REGISTRATION_FILTERS[0];
    return `Registration_Status_${filter.file}-${from}-${to}.xlsx`;
  }
  if (tab?.kind === 'deenroll') return `deenroll_record-${from}-${to}.xlsx`;
  return `${report}-bulkUpload-${from}-${to}.xlsx`;
}

/**
 * The Download reports form: both dates required, the filter required on the registration tab, start ≤ end. A
 * date in the right shape that is not on the calendar (2026-02-30; only a hand-made request can send one) is
 * named as such.
 */
export function validateReportForm(form: {
  report: string;
  startdate: string;
  enddate: string;
  match?: string | undefined;
}): string | null {
  if (!hasDayShape(form.startdate) || !hasDayShape(form.enddate)) return MESSAGES.reportDatesRequired;
  for (const field of ['startdate', 'enddate'] as const)
    if (!parseDay(form[field])) return DATE_MESSAGES.notACalendarDay(field, form[field]);
  if (reportTab(form.report)?.kind === 'registration' && !form.match) return MESSAGES.reportFilterRequired;
  if (form.startdate > form.enddate) return MESSAGES.endBeforeStart;
  return null;
}

export const downloadReportsRequestSchema = z.object({
  report: z.string().min(1).max(40),
  startdate: z.string().max(10),
  enddate: z.string().max(10),
  match: z.enum(['ALL', 'YES', 'NO']).optional(),
  /** The operator's time zone: the days are its whole days (else REPORT_TIMEZONE's). */
  timeZone: timeZoneSchema.optional(),
  /** Paging (large results are paged, never cut): rows after `offset`, at most `limit`. */
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100_000).default(1000),
});
export type DownloadReportsRequest = z.infer<typeof downloadReportsRequestSchema>;

/** A bulk-upload history row. */
export const bulkHistoryRowSchema = z.object({
  id: z.number().int(),
  date_and_time: z.string(),
  /** Path of the uploaded file (under /api/v2/uploads/). */
  file: z.string().nullable(),
  /** The name the file had when uploaded. */
  oldfile: z.string().nullable(),
  isComplete: z.string(),
  lastimei: z.string().nullable(),
  remarks: z.string().nullable(),
});
export type BulkHistoryRow = z.infer<typeof bulkHistoryRowSchema>;

export const downloadReportsResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  items: z.array(z.record(z.string(), z.unknown())),
  commanditems: z.array(z.record(z.string(), z.unknown())),
  total_items: z.number().int(),
  total_commanditems: z.number().int(),
  offset: z.number().int(),
  limit: z.number().int(),
});

/**
 * The path of an uploaded file a history row links to: `/api/v2/uploads/<feature>/<file>`. Names as the
 * server stores them: letters for the feature, and for the file letters, digits, `.`, `_`, `-`, never
 * starting with a dot (so never `.` or `..`).
 */
export const uploadLinkParamsSchema = z.object({
  feature: z
    .string()
    .max(64)
    .regex(/^[A-Za-z]+$/, 'must be the name of a report feature'),
  file: z
    .string()
    .max(255)
    .regex(/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/, 'must be the name of an uploaded file'),
});

export const reportExportQuerySchema = z.object({
  report: z.string().min(1).max(40),
  startdate: z.string().max(10),
  enddate: z.string().max(10),
  match: z.enum(['ALL', 'YES', 'NO']).optional(),
  part: z.enum(['items', 'commands']).default('items'),
  /** The operator's time zone: its whole days, date cells in its wall clock (else REPORT_TIMEZONE's). */
  timeZone: timeZoneSchema.optional(),
});
