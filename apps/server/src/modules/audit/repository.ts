import type { AuditSearch } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import type { RowSource } from '../reports/sources';

export interface AuditEntry {
  actor: Principal | { label: string } | null;
  action: string;
  target?: string | null;
  address?: string | null;
  result: string;
  details?: Record<string, unknown>;
}

/** Appends one row to the append-only audit log (a trigger refuses UPDATE, DELETE and TRUNCATE). */
export async function appendAudit(db: Kysely<DB>, entry: AuditEntry): Promise<void> {
  const actor = entry.actor;
  const principal = actor && 'userId' in actor ? actor : null;
  await db
    .insertInto('audit_log')
    .values({
      actor_user_id: principal?.userId ?? null,
      actor_key_id: principal?.keyId ?? null,
      actor: principal ? principal.email : actor && 'label' in actor ? actor.label : 'system',
      action: entry.action,
      target: entry.target ?? null,
      address: entry.address ?? null,
      result: entry.result,
      details: entry.details ? JSON.stringify(entry.details) : null,
    })
    .execute();
}

/** A retailer user's view of the log: the rows about that retailer's devices, and their own actions. */
export interface AuditScope {
  retailerPhone: string;
  userId: number;
}

/** The audit log, searched by IMEI (target), user, action and date (UTC days), newest first in the JSON. */
export function auditSource(db: Kysely<DB>, search: AuditSearch, scope?: AuditScope): RowSource {
  const query = () => {
    let q = db
      .selectFrom('audit_log')
      .select(['id', 'id as _key', 'at', 'actor', 'action', 'target', 'address', 'result', 'details']);
    if (scope) {
      // Rows name a device by either IMEI (a command by imei1, a refused registration by what it sent).
      const theirs = (column: 'imei1' | 'imei2') =>
        db.selectFrom('devices').select(column).where('retailer_phone', '=', scope.retailerPhone);
      q = q.where((eb) =>
        eb.or([
          eb('target', 'in', theirs('imei1')),
          eb('target', 'in', theirs('imei2')),
          eb('actor_user_id', '=', scope.userId),
        ]),
      );
    }
    if (search.imei) q = q.where('target', '=', search.imei);
    if (search.user) q = q.where(sql`lower(actor)`, '=', search.user.toLowerCase());
    if (search.action) q = q.where('action', 'like', `${search.action.replace(/[%_\\]/g, '')}%`);
    if (search.from) q = q.where('at', '>=', sql<Date>`${search.from}::date`);
    if (search.to) q = q.where('at', '<', sql<Date>`${search.to}::date + 1`);
    return q;
  };
  const map = (row: Record<string, unknown>) => ({
    _key: Number(row._key),
    id: Number(row.id),
    at: new Date(row.at as string).toISOString(),
    actor: String(row.actor),
    action: String(row.action),
    target: (row.target as string | null) ?? null,
    address: (row.address as string | null) ?? null,
    result: String(row.result),
    details: row.details === null || row.details === undefined ? null : JSON.stringify(row.details),
  });
  return {
    columns: ['Id', 'When (UTC)', 'Who', 'What', 'Target', 'Address', 'Result', 'Details'],
    cells: (row) => [row.id, row.at, row.actor, row.action, row.target, row.address, row.result, row.details],
    async count() {
      const row = await query()
        .clearSelect()
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async page(offset, limit) {
      return (await query().orderBy('id', 'desc').offset(offset).limit(limit).execute()).map(map);
    },
    async after(after, limit) {
      const rows = (await query().where('id', '>', after).orderBy('id').limit(limit).execute()).map(map);
      return { rows, last: rows.at(-1)?._key ?? null };
    },
  };
}
