/**
 * The rows behind each report tab (spec §2 Reports), as pageable sources: the JSON call reads a page, the
 * xlsx export walks every row by key (keyset paging: constant memory and time per page at any size).
 */
import {
  type BulkHistoryRow,
  COLUMN_LABELS,
  displayCommand,
  type ExportPart,
  type RegistrationFilter,
  type ReportTab,
} from '@lendlock/contract';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { UploadScope } from '../../authz/resources/uploads';
import type { TenantScope } from '../../authz/tenancy';
import type { DB } from '../../db/types';
import { dateTimeCells, type RowSource } from '../../lib/xlsx-export';
import { inBatchScope } from '../batches/repository';
import { toDeenrollRow, toRegistrationRow } from '../devices/mapper';
import { REGISTRATION_COLUMNS } from '../devices/repository';

export interface DateRange {
  /** The operator's time zone (else REPORT_TIMEZONE): its whole days are asked for, its wall clock exported. */
  timeZone: string;
  /** The inclusive days asked for, as the UTC instants [start, end) (the contract's `daysInZone`). */
  start: Date;
  end: Date;
  /** What the reports show (reports/service.ts asks the authority module). */
  scope: ReportScope;
}

/** The devices whose rows the reports show, and the bulk-upload history's rows and file links. */
export interface ReportScope {
  devices: TenantScope;
  uploads: UploadScope;
}

/** Devices of the scope's retailer, for `imei1 IN (…)`. */
const retailerDevices = (db: Kysely<DB>, phone: string) =>
  db.selectFrom('devices').select('devices.imei1').where('devices.retailer_phone', '=', phone);

const range = (column: string, r: DateRange) =>
  sql<boolean>`${sql.ref(column)} >= ${r.start} AND ${sql.ref(column)} < ${r.end}`;

const iso = (value: unknown) => (value ? new Date(value as string).toISOString() : '');

// biome-ignore lint/suspicious/noExplicitAny: the sources share one paging helper over different tables.
type AnyQuery = SelectQueryBuilder<DB, any, any>;

function pageable(
  query: () => AnyQuery,
  key: string,
  map: (row: never) => Record<string, unknown>,
): Pick<RowSource, 'count' | 'page' | 'after'> {
  return {
    async count() {
      const row = await query().clearSelect().select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
      return Number((row as { n?: number } | undefined)?.n ?? 0);
    },
    async page(offset, limit) {
      const rows = await query().orderBy(sql.ref(key)).offset(offset).limit(limit).execute();
      return rows.map((r) => map(r as never));
    },
    async after(after, limit) {
      const rows = await query().where(sql.ref(key), '>', after).orderBy(sql.ref(key)).limit(limit).execute();
      const last = rows.length > 0 ? Number((rows.at(-1) as Record<string, unknown>)._key) : null;
      return { rows: rows.map((r) => map(r as never)), last };
    },
  };
}

export function registrationSource(db: Kysely<DB>, r: DateRange, match: RegistrationFilter): RowSource {
  const at = dateTimeCells(r.timeZone);
  const query = () => {
    let q = db
      .selectFrom('registrations')
      .leftJoin('devices', 'devices.imei1', 'registrations.imei1')
      .select(['registrations.id as _key', ...REGISTRATION_COLUMNS])
      .where(range('registrations.created_at', r));
    if (match !== 'ALL') q = q.where('registrations.match_status', '=', match);
    const { retailerPhone } = r.scope.devices;
    if (retailerPhone !== null) q = q.where('registrations.retailer_phone', '=', retailerPhone);
    return q as AnyQuery;
  };
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
    ...pageable(query, 'registrations.id', (row) => ({
      ...toRegistrationRow(row),
      _key: Number((row as { _key: number })._key),
    })),
  };
}

export function deenrollSource(db: Kysely<DB>, r: DateRange): RowSource {
  const at = dateTimeCells(r.timeZone);
  const query = () =>
    db
      .selectFrom('deenrollments')
      .select(['id as _key', 'imei1', 'imei2', 'action', 'created_at'])
      .where(range('created_at', r))
      .$if(r.scope.devices.retailerPhone !== null, (q) =>
        q.where('imei1', 'in', retailerDevices(db, r.scope.devices.retailerPhone ?? '')),
      ) as AnyQuery;
  return {
    columns: [COLUMN_LABELS.imei1, COLUMN_LABELS.imei2, COLUMN_LABELS.action, COLUMN_LABELS.createdAt],
    cells: (row) => [row.imei1, row.imei2, row.action, at(row.createdat)],
    ...pageable(query, 'id', (row) => ({
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
  const { rowsOf, files } = r.scope.uploads;
  const ownerLevel = sql`(SELECT u.userlevel FROM users u WHERE u.id = batches.user_id)`;
  const query = () =>
    db
      .selectFrom('batches')
      .select([
        'id as _key',
        'id',
        'created_at',
        'stored_file',
        'file_name',
        'status',
        'last_imei',
        'remarks',
        'paused_reason',
        'processed',
        'found',
        'not_found',
        inBatchScope(files, ownerLevel).as('file_readable'),
      ])
      .where('feature', '=', tab.statusOf ?? '')
      .where(range('created_at', r))
      .$if(rowsOf !== null, (q) => q.where('user_id', '=', rowsOf ?? 0)) as AnyQuery;
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
    ...pageable(query, 'id', toRow as never),
  };
}

/** `to_char` format of Date.prototype.toISOString (UTC, milliseconds): the API's date-times. */
const ISO_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

export function commandSource(db: Kysely<DB>, r: DateRange, tab: ReportTab): RowSource {
  const at = dateTimeCells(r.timeZone);
  // The rows come out of the database already in the shape of an executed-command row
  // (toExecutedCommandRow): a million-row export formats its dates and command types in PostgreSQL,
  // beside the writer, instead of parsing and re-formatting two dates per row in it.
  const query = () =>
    db
      .selectFrom('commands')
      .select([
        'id as _key',
        'id',
        sql<string>`to_char(coalesce(completed_at, created_at) AT TIME ZONE 'UTC', ${ISO_FORMAT})`.as(
          'date_and_time',
        ),
        'imei1',
        'transaction_id as transactionId',
        'interface',
        'command',
        'status',
        'user_label as user',
        sql<string>`coalesce(options->>'level', options->>'caseType', '')`.as('commandType'),
        sql<string>`to_char(created_at AT TIME ZONE 'UTC', ${ISO_FORMAT})`.as('createdat'),
      ])
      .where('command', 'in', [...(tab.commands ?? [])])
      .where(range('created_at', r))
      .$if(r.scope.devices.retailerPhone !== null, (q) =>
        q.where('imei1', 'in', retailerDevices(db, r.scope.devices.retailerPhone ?? '')),
      ) as AnyQuery;
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
    ...pageable(query, 'id', (row) => row),
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
