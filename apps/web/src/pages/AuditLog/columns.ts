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
 * A row's cells; its details as labelled fields (`detailText`); its time in the browser's time zone, whose days the From and To dates are (the search
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
    detailText(row.details),
  ];
}

/** `batchId` → 'Batch id', `sessions_ended` → 'Sessions ended'. */
function fieldLabel(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_.-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function fieldValue(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (Array.isArray(value)) return value.map(fieldValue).join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/**
 * A row's details as labelled fields, `Label: value · Label: value` (an object one level deep is read
 * as `Outer inner: value`), instead of the JSON the log keeps; text that is not a JSON object as it is.
 */
export function detailText(details: string | null): string {
  if (!details) return '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(details);
  } catch {
    return details;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return details;
  const fields: string[] = [];
  for (const [key, value] of Object.entries(parsed)) {
    if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [inner, innerValue] of Object.entries(value))
        fields.push(`${fieldLabel(`${key} ${inner}`)}: ${fieldValue(innerValue)}`);
    } else {
      fields.push(`${fieldLabel(key)}: ${fieldValue(value)}`);
    }
  }
  return fields.join(' · ');
}
