import {
  type AuditRow,
  auditBrand,
  auditExportFileName,
  auditFileName,
  auditReportExportQuerySchema,
  auditSearchResponseSchema,
  auditSearchSchema,
  isAuditEmpty,
  MESSAGES,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../app';
import { operatorTimeZone } from '../../lib/timeZone';
import { requirePrincipal } from '../../plugins/auth';
import { notFound } from '../../plugins/errors';
import { auditReport } from '../devices/service';
import { attachment, auditReportXlsx, streamXlsx } from '../reports/export';
import { AUDIT_COUNT_CAP, appendAudit } from './repository';
import { auditLog } from './service';

/**
 * The SUPERADMIN's audit log search and export (append-only; the database refuses UPDATE and DELETE),
 * and the Audit Report By IMEI's xlsx download.
 */
export function auditRoutes(ctx: AppContext): FastifyPluginAsyncZod {
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
        const source = auditLog(ctx.db, requirePrincipal(request), request.body, timeZone);
        // The count stops at AUDIT_COUNT_CAP: a search never counts the whole log.
        const [rows, counted] = await Promise.all([
          source.page(request.body.offset, request.body.limit),
          source.countUpTo(AUDIT_COUNT_CAP),
        ]);
        return {
          status: 'success' as const,
          items: rows.map(({ _key, ...row }) => row as AuditRow),
          total: counted.total,
          totalCapped: counted.capped,
        };
      },
    );

    app.get(
      '/api/v2/audit/export',
      { schema: { querystring: auditSearchSchema } },
      async (request, reply) => {
        const timeZone = operatorTimeZone(ctx.config, request.query.timeZone);
        const source = auditLog(ctx.db, requirePrincipal(request), request.query, timeZone);
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

    // The Audit Report By IMEI (spec §2) as an xlsx file, written by the server's own xlsx writer:
    // `AuditReport_{brand}_imei-{imei}.xlsx`, one sheet per section (the report's permission, as
    // auditReportByImei.php; a retailer user's scope alike).
    app.get(
      '/api/v2/auditReport/export',
      { schema: { querystring: auditReportExportQuerySchema } },
      async (request, reply) => {
        const principal = requirePrincipal(request);
        const { imei1, timeZone } = request.query;
        const audit = await auditReport(ctx.db, principal, imei1);
        if (isAuditEmpty(audit)) throw notFound(MESSAGES.auditEmpty);
        const file = await auditReportXlsx(audit, operatorTimeZone(ctx.config, timeZone));
        const name = auditFileName(auditBrand(audit), imei1);
        await appendAudit(ctx.db, {
          actor: principal,
          action: 'auditReport.export',
          target: imei1,
          address: request.ip,
          result: 'success',
          details: {
            registration: audit.registration.length,
            release: audit.release.length,
            deenroll: audit.deenroll.length,
            commands: audit.commands.length,
          },
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
