/** The audit log table: its columns (headings and widths) and the text of each cell of a row. */
import type { AuditRow } from '../../api/audit';
import type { TextColumn } from '../../components/columns';
import { formatLocalDateTime } from '../../lib/datetime';
import { AUDIT_LOG_LABELS as L } from './labels';

export const AUDIT_LOG_COLUMNS: readonly TextColumn[] = [
  { title: L.when, width: 170 },
  { title: L.who, width: 220 },
  { title: L.what, width: 190 },
  { title: L.target, width: 200 },
  { title: L.address, width: 130 },
  { title: L.result, width: 140 },
  { title: L.details, width: 420 },
];

/**
 * A row's cells; its time in the browser's time zone, whose days the From and To dates are (the search
 * sends the zone, api/timeZone.ts), as the server's export writes it.
 */
export function auditCells(row: AuditRow): string[] {
  return [
    formatLocalDateTime(row.at),
    row.actor,
    row.action,
    row.target ?? '',
    row.address ?? '',
    row.result,
    row.details ?? '',
  ];
}
