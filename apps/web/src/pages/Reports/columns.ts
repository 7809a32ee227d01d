/**
 * The result tables' columns (Registration, De-enroll, Bulk-upload history and Executed command
 * rows): headings, widths and the text of each cell. Executed commands show their interface letter
 * (S, A, B) and the contract's display names (LOCKWALLPAPER → SET WALLPAPER, …). Pure, so it is unit-tested.
 */
import {
  type BulkHistoryRow,
  type DeenrollRow,
  displayCommand,
  type ExecutedCommandRow,
  type RegistrationRow,
} from '@lendlock/contract';
import type { TextColumn } from '../../components/columns';
import { formatLocalDateTime } from '../../lib/datetime';
import { REPORT_LABELS as L } from './labels';

/** Widths in px: the tables have a fixed layout, so columns do not jump while rows scroll by. */
type Column = TextColumn;

const when = (iso: string) => formatLocalDateTime(iso);
const text = (value: string | null | undefined) => value ?? '';

export const SNO_COLUMN: Column = { title: L.sno, width: 80 };
export const ACTION_COLUMN: Column = { title: L.action, width: 110 };

export const REGISTRATION_COLUMNS: readonly Column[] = [
  { title: L.imei1, width: 150 },
  { title: L.imei2, width: 150 },
  { title: L.matchStatus, width: 110 },
  { title: L.registrationStatus, width: 160 },
  { title: L.dateAndTime, width: 170 },
  { title: L.manufacturer, width: 170 },
  { title: L.brand, width: 110 },
  { title: L.model, width: 130 },
  { title: L.lastCommand, width: 170 },
];

export function registrationCells(row: RegistrationRow): string[] {
  return [
    row.imei1,
    text(row.imei2),
    row.Match_Status,
    row.Registration_status,
    when(row.date_and_time),
    row.Manufacturer,
    row.brand,
    row.model,
    row.command ? displayCommand(row.command) : '',
  ];
}

export const DEENROLL_COLUMNS: readonly Column[] = [
  { title: L.imei1, width: 160 },
  { title: L.imei2, width: 160 },
  { title: L.action, width: 200 },
  { title: L.createdAt, width: 180 },
];

export function deenrollCells(row: DeenrollRow): string[] {
  return [row.imei1, text(row.imei2), row.action, when(row.createdat)];
}

/** The File column (index 1) is a link to the uploaded file. */
export const BULK_HISTORY_COLUMNS: readonly Column[] = [
  { title: L.dateAndTime, width: 170 },
  { title: L.file, width: 260 },
  { title: L.isComplete, width: 110 },
  { title: L.lastImei, width: 150 },
  { title: L.remarks, width: 320 },
];
export const BULK_HISTORY_FILE_COLUMN = 1;

/** The name a history row's file link shows: the name it was uploaded under, else the stored one. */
export function uploadedFileName(row: Pick<BulkHistoryRow, 'file' | 'oldfile'>): string {
  return row.oldfile ?? row.file?.split('/').pop() ?? '';
}

export function bulkHistoryCells(row: BulkHistoryRow): string[] {
  return [
    when(row.date_and_time),
    uploadedFileName(row),
    row.isComplete,
    text(row.lastimei),
    text(row.remarks),
  ];
}

/** The Interface column (index 3) shows S, A or B with its meaning as a tooltip. */
export const COMMAND_COLUMNS: readonly Column[] = [
  { title: L.dateAndTime, width: 170 },
  { title: L.imei1, width: 150 },
  { title: L.transactionId, width: 310 },
  { title: L.interface, width: 90 },
  { title: L.command, width: 170 },
  { title: L.commandType, width: 140 },
  { title: L.status, width: 110 },
  { title: L.user, width: 210 },
  { title: L.createdAt, width: 170 },
];
export const COMMAND_INTERFACE_COLUMN = 3;

export function commandCells(row: ExecutedCommandRow): string[] {
  return [
    when(row.date_and_time),
    row.imei1,
    row.transactionId,
    row.interface,
    displayCommand(row.command),
    row.commandType,
    row.status,
    row.user,
    when(row.createdat),
  ];
}
