/** The audit log table: its columns (headings and widths) and the text of each cell of a row. */
import type { AuditRow } from '../../api/audit';
import type { TextColumn } from '../../components/columns';
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

const pad = (n: number): string => String(n).padStart(2, '0');

/** `YYYY-MM-DD HH:mm:ss` in UTC (the From and To dates are UTC days too); '' when unparseable. */
export function formatUtcDateTime(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return (
    `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
  );
}

export function auditCells(row: AuditRow): string[] {
  return [
    formatUtcDateTime(row.at),
    row.actor,
    row.action,
    row.target ?? '',
    row.address ?? '',
    row.result,
    row.details ?? '',
  ];
}
