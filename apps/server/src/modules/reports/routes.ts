import {
  downloadReportsRequestSchema,
  downloadReportsResponseSchema,
  exportFileName,
  MESSAGES,
  reportExportQuerySchema,
  uploadLinkParamsSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { badRequest } from '../../core/errors';
import { requirePrincipal } from '../../core/principal';
import { operatorTimeZone } from '../../lib/timeZone';
import { streamXlsx } from '../../lib/xlsx-export';
import { type ReportQuery, reportRequest } from './service';

/** Reports and history (downloadReports.php) and their streaming xlsx exports. */
export function reportRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  // The operator's whole days (the console's time zone, else REPORT_TIMEZONE), and what the caller may see.
  const checked = (request: FastifyRequest, query: ReportQuery & { timeZone?: string | undefined }) =>
    reportRequest(requirePrincipal(request), query, operatorTimeZone(ctx.config, query.timeZone));
  return async (app) => {
    app.post(
      '/api/downloadReports.php',
      { schema: { body: downloadReportsRequestSchema, response: { 200: downloadReportsResponseSchema } } },
      async (request) => {
        const { tab, range, match } = checked(request, request.body);
        const { offset, limit } = request.body;
        const items = ctx.reports.sourceFor(tab, 'items', range, match);
        const commands = ctx.reports.sourceFor(tab, 'commands', range, match);
        const [itemRows, itemTotal, commandRows, commandTotal] = await Promise.all([
          items ? items.page(offset, limit) : [],
          items ? items.count() : 0,
          commands ? commands.page(offset, limit) : [],
          commands ? commands.count() : 0,
        ]);
        const strip = (rows: Record<string, unknown>[]) => rows.map(({ _key, ...row }) => row);
        return {
          status: 'success' as const,
          message:
            itemTotal + commandTotal === 0
              ? MESSAGES.noResults
              : `${itemTotal} rows, ${commandTotal} commands`,
          items: strip(itemRows),
          commanditems: strip(commandRows),
          total_items: itemTotal,
          total_commanditems: commandTotal,
          offset,
          limit,
        };
      },
    );

    app.get(
      '/api/v2/reports/export',
      { schema: { querystring: reportExportQuerySchema } },
      async (request, reply) => {
        const query = request.query;
        const { tab, range, match } = checked(request, query);
        const source = ctx.reports.sourceFor(tab, query.part, range, match);
        if (!source) throw badRequest('This report has no such part.');
        const total = await source.count();
        const name = exportFileName(tab.report, query.part, query.startdate, query.enddate, match);
        const { stream, done } = streamXlsx(source, tab.label.replace(/[\\/?*[\]:]/g, '-'));
        done.catch((error: unknown) => request.log.error({ err: error }, 'export failed'));
        return reply
          .header('content-type', 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet')
          .header('content-disposition', `attachment; filename="${name}"`)
          .header('x-total-rows', String(total))
          .header('cache-control', 'no-store')
          .send(stream);
      },
    );

    // The uploaded files the bulk-upload history links to (modules/uploads: scope, retention).
    app.get(
      '/api/v2/uploads/:feature/:file',
      { schema: { params: uploadLinkParamsSchema } },
      async (request, reply) => {
        const { feature, file } = request.params;
        const opened = await ctx.reports.openUpload(requirePrincipal(request), {
          dataDir: ctx.config.dataDir,
          retentionMs: ctx.config.uploadRetentionMs,
          feature,
          file,
        });
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="${opened.downloadName}"`)
          .send(opened.handle.createReadStream());
      },
    );
  };
}
