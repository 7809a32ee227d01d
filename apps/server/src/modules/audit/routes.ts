import {
  type AuditRow,
  type AuditSearch,
  auditExportFileName,
  auditSearchResponseSchema,
  auditSearchSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { type Kysely, sql } from 'kysely';
import type { AppContext } from '../../app';
import type { DB } from '../../db/types';
import { badRequest } from '../../plugins/errors';
import { streamXlsx } from '../reports/export';
import type { RowSource } from '../reports/sources';

/** The audit log, searched by IMEI (target), user, action and date (UTC days), newest first in the JSON. */
function auditSource(db: Kysely<DB>, search: AuditSearch): RowSource {
  const query = () => {
    let q = db
      .selectFrom('audit_log')
      .select(['id', 'id as _key', 'at', 'actor', 'action', 'target', 'address', 'result', 'details']);
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

/** The SUPERADMIN's audit log search and export (append-only; the database refuses UPDATE and DELETE). */
export function auditRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const checkRange = (search: AuditSearch) => {
    if (search.from && search.to && search.from > search.to)
      throw badRequest('End date cannot be prior to start date.');
  };
  return async (app) => {
    app.post(
      '/api/v2/audit/search',
      {
        schema: {
          body: auditSearchSchema,
          response: {
            200: auditSearchResponseSchema,
          },
        },
      },
      async (request) => {
        checkRange(request.body);
        const source = auditSource(ctx.db, request.body);
        const [rows, total] = await Promise.all([
          source.page(request.body.offset, request.body.limit),
          source.count(),
        ]);
        return {
          status: 'success' as const,
          items: rows.map(({ _key, ...row }) => row as AuditRow),
          total,
        };
      },
    );

    app.get(
      '/api/v2/audit/export',
      { schema: { querystring: auditSearchSchema } },
      async (request, reply) => {
        checkRange(request.query);
        const source = auditSource(ctx.db, request.query);
        const { stream, done } = streamXlsx(source, 'Audit log');
        done.catch((error: unknown) => request.log.error({ err: error }, 'audit export failed'));
        const name = auditExportFileName(request.query.from, request.query.to);
        return reply
          .header('content-type', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('cache-control', 'no-store')
          .header('x-total-rows', String(await source.count()))
          .send(stream);
      },
    );
  };
}
