import {
  type AuditRow,
  auditExportFileName,
  auditReportExportQuerySchema,
  auditSearchResponseSchema,
  auditSearchSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';
import { attachment } from '../../lib/attachment';
import { operatorTimeZone } from '../../lib/timeZone';
import { streamXlsx } from '../../lib/xlsx-export';

/**
 * The SUPERADMIN's audit log search and export (append-only; the database refuses UPDATE and DELETE),
 * and the Audit Report By IMEI's xlsx download.
 */
export function auditRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
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
        const timeZone = operatorTimeZone(ctx.config, request.body.timeZone);
        // What the caller may read of the log (audit/service.ts): a retailer user, its own part.
        const found = await ctx.audit.searchAudit(requirePrincipal(request), request.body, timeZone);
        return {
          status: 'success' as const,
          items: found.rows.map(({ _key, ...row }) => row as AuditRow),
          total: found.total,
          totalCapped: found.capped,
        };
      },
    );

    app.get(
      '/api/v2/audit/export',
      { schema: { querystring: auditSearchSchema } },
      async (request, reply) => {
        const timeZone = operatorTimeZone(ctx.config, request.query.timeZone);
        const source = ctx.audit.auditLog(requirePrincipal(request), request.query, timeZone);
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

    // The Audit Report By IMEI as an xlsx file, written by the server's own xlsx writer:
    // `AuditReport_{brand}_imei-{imei}.xlsx`, one sheet per section (the report's permission, as
    // auditReportByImei.php; a retailer user's scope alike).
    app.get(
      '/api/v2/auditReport/export',
      { schema: { querystring: auditReportExportQuerySchema } },
      async (request, reply) => {
        const principal = requirePrincipal(request);
        const { imei1, timeZone } = request.query;
        // The report as the devices service reads it for the caller; its file is the reports service's.
        const audit = await ctx.devices.auditReport(principal, imei1);
        const { file, name } = await ctx.reports.exportAuditReport(principal, audit, {
          imei1,
          timeZone: operatorTimeZone(ctx.config, timeZone),
          address: request.ip,
        });
        return reply
          .header('content-type', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', attachment(name))
          .header('cache-control', 'no-store')
          .send(file);
      },
    );
  };
}
