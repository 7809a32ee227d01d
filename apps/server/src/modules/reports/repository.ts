/**
 * The queries of the Reports screen: the rows of each tab over a range of days and a scope, pageable
 * by offset (the JSON call) and by key (the xlsx export: keyset paging, constant memory and time per page
 * at any size). How a row is shown and exported is sources.ts's.
 */
import type { RawCommand, RegistrationFilter } from '@lendlock/contract';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { UploadScope } from '../../authz/resources/uploads';
import type { TenantScope } from '../../authz/tenancy';
import type { DB } from '../../db/types';
import { inBatchScope } from '../batches/repository';
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

/** Rows of one query, each with its `_key`: counted, by offset, or by key. */
export interface PagedRows {
  count(): Promise<number>;
  /** Rows after `offset` (JSON paging). */
  page(offset: number, limit: number): Promise<Record<string, unknown>[]>;
  /** Rows with key > `after`, by key (export). Returns the rows and the last key. */
  after(after: number, limit: number): Promise<{ rows: Record<string, unknown>[]; last: number | null }>;
}

/** Devices of the scope's retailer, for `imei1 IN (…)`. */
const retailerDevices = (db: Kysely<DB>, phone: string) =>
  db.selectFrom('devices').select('devices.imei1').where('devices.retailer_phone', '=', phone);

const range = (column: string, r: DateRange) =>
  sql<boolean>`${sql.ref(column)} >= ${r.start} AND ${sql.ref(column)} < ${r.end}`;

// biome-ignore lint/suspicious/noExplicitAny: the sources share one paging helper over different tables.
type AnyQuery = SelectQueryBuilder<DB, any, any>;

function pageable(query: () => AnyQuery, key: string): PagedRows {
  return {
    async count() {
      const row = await query().clearSelect().select(sql<number>`count(*)::int`.as('n')).executeTakeFirst();
      return Number((row as { n?: number } | undefined)?.n ?? 0);
    },
    async page(offset, limit) {
      const rows = await query().orderBy(sql.ref(key)).offset(offset).limit(limit).execute();
      return rows as Record<string, unknown>[];
    },
    async after(after, limit) {
      const rows = await query().where(sql.ref(key), '>', after).orderBy(sql.ref(key)).limit(limit).execute();
      const last = rows.length > 0 ? Number((rows.at(-1) as Record<string, unknown>)._key) : null;
      return { rows: rows as Record<string, unknown>[], last };
    },
  };
}

/** The registrations of the range, with their device's columns (`match`: the match status asked for). */
export function registrationRows(db: Kysely<DB>, r: DateRange, match: RegistrationFilter): PagedRows {
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
  return pageable(query, 'registrations.id');
}

export function deenrollRows(db: Kysely<DB>, r: DateRange): PagedRows {
  const query = () =>
    db
      .selectFrom('deenrollments')
      .select(['id as _key', 'imei1', 'imei2', 'action', 'created_at'])
      .where(range('created_at', r))
      .$if(r.scope.devices.retailerPhone !== null, (q) =>
        q.where('imei1', 'in', retailerDevices(db, r.scope.devices.retailerPhone ?? '')),
      ) as AnyQuery;
  return pageable(query, 'id');
}

/**
 * The batches of `feature` in the range and the scope's rows, each with `file_readable`: whether the
 * scope's files hold its uploaded file (who may read the batch: authz/resources/uploads.ts).
 */
export function bulkHistoryRows(db: Kysely<DB>, r: DateRange, feature: string): PagedRows {
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
      .where('feature', '=', feature)
      .where(range('created_at', r))
      .$if(rowsOf !== null, (q) => q.where('user_id', '=', rowsOf ?? 0)) as AnyQuery;
  return pageable(query, 'id');
}

/** `to_char` format of Date.prototype.toISOString (UTC, milliseconds): the API's date-times. */
const ISO_FORMAT = 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"';

/**
 * The commands of the range among `commands`. The rows come out of the database already in the shape of
 * an executed-command row (toExecutedCommandRow): a million-row export formats its dates and command
 * types in PostgreSQL, beside the writer, instead of parsing and re-formatting two dates per row in it.
 */
export function commandRows(db: Kysely<DB>, r: DateRange, commands: readonly RawCommand[]): PagedRows {
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
      .where('command', 'in', [...commands])
      .where(range('created_at', r))
      .$if(r.scope.devices.retailerPhone !== null, (q) =>
        q.where('imei1', 'in', retailerDevices(db, r.scope.devices.retailerPhone ?? '')),
      ) as AnyQuery;
  return pageable(query, 'id');
}
