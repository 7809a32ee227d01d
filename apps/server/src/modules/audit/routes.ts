import {
  type AuditRow,
  type AuditSearch,
  auditExportFileName,
  auditSearchResponseSchema,
  auditSearchSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../app';
import { requirePrincipal } from '../../plugins/auth';
import { badRequest } from '../../plugins/errors';
import { streamXlsx } from '../reports/export';
import { type AuditScope, auditSource } from './repository';

/** The SUPERADMIN's audit log search and export (append-only; the database refuses UPDATE and DELETE). */
export function auditRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const checkRange = (search: AuditSearch) => {
    if (search.from && search.to && search.from > search.to)
      throw badRequest('End date cannot be prior to start date.');
  };
  /** A retailer user reads only the rows about that retailer's devices, and their own actions. */
  const scopeOf = (request: FastifyRequest): AuditScope | undefined => {
    const principal = requirePrincipal(request);
    return principal.retailerPhone
      ? { retailerPhone: principal.retailerPhone, userId: principal.userId }
      : undefined;
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
        const source = auditSource(ctx.db, request.body, scopeOf(request));
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
        const source = auditSource(ctx.db, request.query, scopeOf(request));
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
