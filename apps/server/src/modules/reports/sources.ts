/**
 * The rows behind each tab of the Reports screen, as pageable sources: the JSON call reads a page, the
 * xlsx export walks every row by key. The queries are the repository's; here each row gets the shape the
 * API answers and the columns and cells the export writes.
 */
import {
  type BulkHistoryRow,
  COLUMN_LABELS,
  displayCommand,
  type ExportPart,
  type RegistrationFilter,
  type ReportTab,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { dateTimeCells, type RowSource } from '../../lib/xlsx-export';
import { toDeenrollRow, toRegistrationRow } from '../devices/mapper';
import {
  bulkHistoryRows,
  commandRows,
  type DateRange,
  deenrollRows,
  type PagedRows,
  registrationRows,
} from './repository';

const iso = (value: unknown) => (value ? new Date(value as string).toISOString() : '');

/** `rows` with each row in the shape the API answers (the key stays beside it). */
function mapped(
  rows: PagedRows,
  map: (row: never) => Record<string, unknown>,
): Pick<RowSource, 'count' | 'page' | 'after'> {
  return {
    count: () => rows.count(),
    async page(offset, limit) {
      return (await rows.page(offset, limit)).map((r) => map(r as never));
    },
    async after(after, limit) {
      const found = await rows.after(after, limit);
      return { rows: found.rows.map((r) => map(r as never)), last: found.last };
    },
  };
}

export function registrationSource(db: Kysely<DB>, r: DateRange, match: RegistrationFilter): RowSource {
  const at = dateTimeCells(r.timeZone);
  return {
    columns: [
      COLUMN_LABELS.imei1,
      COLUMN_LABELS.imei2,
      COLUMN_LABELS.matchStatus,
      COLUMN_LABELS.registrationStatus,
      COLUMN_LABELS.dateAndTime,
      COLUMN_LABELS.manufacturer,
      COLUMN_LABELS.brand,
      COLUMN_LABELS.model,
      COLUMN_LABELS.lastCommand,
    ],
    cells: (row) => [
      row.imei1,
      row.imei2,
      row.Match_Status,
      row.Registration_status,
      at(row.date_and_time),
      row.Manufacturer,
      row.brand,
      row.model,
      row.command,
    ],
    ...mapped(registrationRows(db, r, match), (row) => ({
      ...toRegistrationRow(row),
      _key: Number((row as { _key: number })._key),
    })),
  };
}

export function deenrollSource(db: Kysely<DB>, r: DateRange): RowSource {
  const at = dateTimeCells(r.timeZone);
  return {
    columns: [COLUMN_LABELS.imei1, COLUMN_LABELS.imei2, COLUMN_LABELS.action, COLUMN_LABELS.createdAt],
    cells: (row) => [row.imei1, row.imei2, row.action, at(row.createdat)],
    ...mapped(deenrollRows(db, r), (row) => ({
      ...toDeenrollRow(row),
      _key: Number((row as { _key: number })._key),
    })),
  };
}

/**
 * The bulk-upload history of a tab: the rows of the scope, each linking its uploaded file only when the
 * scope's files hold it (who may read the batch: authz/resources/uploads.ts).
 */
export function bulkHistorySource(db: Kysely<DB>, r: DateRange, tab: ReportTab): RowSource {
  const at = dateTimeCells(r.timeZone);
  const summary = (row: Record<string, unknown>) =>
    `processed ${row.processed as number}: found ${row.found as number}, not found ${row.not_found as number}`;
  const toRow = (row: Record<string, unknown>): BulkHistoryRow & { _key: number } => ({
    _key: Number(row._key),
    id: Number(row.id),
    date_and_time: iso(row.created_at),
    file: row.stored_file && row.file_readable ? `/api/v2/uploads/${row.stored_file as string}` : null,
    oldfile: (row.file_name as string | null) ?? null,
    isComplete: row.status as string,
    lastimei: (row.last_imei as string | null) ?? null,
    // A batch the server paused on its own says why first (owner disabled, key deactivated).
    remarks: [
      row.status === 'incomplete' ? (row.paused_reason as string | null) : null,
      (row.remarks as string | null) ?? summary(row),
    ]
      .filter(Boolean)
      .join(' '),
  });
  return {
    columns: [
      COLUMN_LABELS.id,
      COLUMN_LABELS.dateAndTime,
      COLUMN_LABELS.file,
      COLUMN_LABELS.oldFile,
      COLUMN_LABELS.isComplete,
      COLUMN_LABELS.lastImei,
      COLUMN_LABELS.remarks,
    ],
    cells: (row) => [
      row.id,
      at(row.date_and_time),
      row.file,
      row.oldfile,
      row.isComplete,
      row.lastimei,
      row.remarks,
    ],
    ...mapped(bulkHistoryRows(db, r, tab.statusOf ?? ''), toRow as never),
  };
}

export function commandSource(db: Kysely<DB>, r: DateRange, tab: ReportTab): RowSource {
  const at = dateTimeCells(r.timeZone);
  return {
    columns: [
      COLUMN_LABELS.id,
      COLUMN_LABELS.dateAndTime,
      COLUMN_LABELS.imei1,
      COLUMN_LABELS.transactionId,
      COLUMN_LABELS.interface,
      COLUMN_LABELS.command,
      COLUMN_LABELS.status,
      COLUMN_LABELS.user,
      COLUMN_LABELS.commandType,
      COLUMN_LABELS.createdAt,
    ],
    cells: (row) => [
      row.id,
      at(row.date_and_time),
      row.imei1,
      row.transactionId,
      row.interface,
      displayCommand(String(row.command)),
      row.status,
      row.user,
      row.commandType,
      at(row.createdat),
    ],
    ...mapped(commandRows(db, r, tab.commands ?? []), (row) => row),
  };
}

/** The source of one part of a tab; null for a part the tab does not have. */
export function sourceFor(
  db: Kysely<DB>,
  tab: ReportTab,
  part: ExportPart,
  r: DateRange,
  match: RegistrationFilter,
): RowSource | null {
  if (part === 'commands') return tab.kind === 'command' ? commandSource(db, r, tab) : null;
  if (tab.kind === 'registration') return registrationSource(db, r, match);
  if (tab.kind === 'deenroll') return deenrollSource(db, r);
  return bulkHistorySource(db, r, tab);
}
