import {
  batchExportQuerySchema,
  batchIdRequestSchema,
  batchListRequestSchema,
  batchListResponseSchema,
  batchProgressResponseSchema,
  batchResultsRequestSchema,
  batchResultsResponseSchema,
  bulkUploadResponseSchema,
  COMMAND_DEFINITIONS,
  type CommandDefinition,
  type CommandOptions,
  commandForAction,
  commandForStatusOf,
  currentBatchRequestSchema,
  currentBatchResponseSchema,
  dayInTimeZone,
  imeiDetailsRequestSchema,
  imeiDetailsResponseSchema,
  MESSAGES,
  notifyMessage,
  REPORT_TRUNCATION,
  resultsFileName,
  statusMessageSchema,
  updateCommandRequestSchema,
  updateStatusRequestSchema,
  validateImeiCsv,
  validateNotifyCsv,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { AppError, badRequest, forbidden } from '../../core/errors';
import { type Principal, requirePrincipal } from '../../core/principal';
import { attachment } from '../../lib/attachment';
import { type ReceivedUpload, readStored, receiveUpload, UPLOAD_MESSAGES } from '../../lib/upload';
import { toBatchListItem, toBatchProgress, toBatchResult } from './mapper';
import { itemSelection } from './results';
import type { BatchRowInput } from './service';

export const BATCH_MESSAGES = {
  uploaded: 'File uploaded successfully. The batch is running on the server.',
  noFile: 'Attach the CSV file as "file".',
  tooManyRows: UPLOAD_MESSAGES.tooManyRows,
  userMismatch: 'The user field must name the signed-in user.',
  unknownStatusOf: (statusOf: string) => `Unknown statusOf: ${statusOf.slice(0, 64)}`,
} as const;

function assertUser(principal: Principal, user: string | undefined): void {
  if (user && user.trim().toLowerCase() !== principal.email.toLowerCase())
    throw forbidden(BATCH_MESSAGES.userMismatch);
}

/** The bulk scripts: one per definition with a batch form (bulkGreyCopy once). */
const BULK_SCRIPTS = COMMAND_DEFINITIONS.filter(
  (d, i, all) => d.batch && d.bulkScript && all.findIndex((o) => o.bulkScript === d.bulkScript) === i,
) as CommandDefinition[];

/**
 * Validates a stored upload with the contract's validator for the command (Notify rows carry their texts).
 * `today`: the operator's day, for the Notify date rule (Pre today or later, Post today or earlier, Due today).
 */
async function validateUpload(definition: CommandDefinition, path: string, today: string) {
  if (definition.input === 'notify') {
    const checked = await validateNotifyCsv(readStored(path), { today });
    return {
      ...checked,
      rows: checked.valid.map((r): BatchRowInput => {
        const texts = notifyMessage(r.template, r);
        return {
          imei: r.imei,
          name: r.name,
          amount: r.amount,
          date: r.date,
          template: r.template,
          header: texts.header,
          message: texts.message,
        };
      }),
    };
  }
  const checked = await validateImeiCsv(readStored(path));
  return { ...checked, rows: checked.valid.map((imei): BatchRowInput => ({ imei })) };
}

export function batchRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  const { batches } = ctx;

  // The batch's owner or a strictly higher level, with its command's permission (authz/resources/batches.ts).
  const ownBatch = (request: FastifyRequest, batchId: number) =>
    batches.authorised(batchId, requirePrincipal(request));

  return async (app) => {
    for (const definition of BULK_SCRIPTS) {
      app.post(
        `/api/${definition.bulkScript}`,
        { schema: { response: { 200: bulkUploadResponseSchema } } },
        async (request) => {
          const principal = requirePrincipal(request);
          batches.assertMayStart(principal, definition.raw);
          const feature = definition.statusOf ?? definition.screen;
          const fields: Record<string, string> = {};
          // The file waits in DATA_DIR/incoming until its batch is accepted; any refusal deletes it.
          let upload: ReceivedUpload | null = null;
          try {
            for await (const part of request.parts()) {
              if (part.type === 'file') {
                if (part.fieldname !== 'file' || upload) {
                  part.file.resume();
                  continue;
                }
                upload = await receiveUpload(part, ctx.config.dataDir);
              } else {
                fields[part.fieldname] = String(part.value ?? '');
              }
            }
            if (!upload) throw badRequest(BATCH_MESSAGES.noFile);
            assertUser(principal, fields.user);
            const options: CommandOptions = {};
            if (definition.raw === 'GREYAPP' && (fields.level === 'level1' || fields.level === 'level2'))
              options.level = fields.level;
            // The operator's day: in the time zone the console sends (timeZone), else REPORT_TIMEZONE.
            const today =
              dayInTimeZone(fields.timeZone ?? '') ?? (dayInTimeZone(ctx.config.reportTimeZone) as string);
            const checked = await validateUpload(definition, upload.path, today);
            if (checked.total > ctx.config.batchMaxRows)
              throw badRequest(BATCH_MESSAGES.tooManyRows(ctx.config.batchMaxRows));
            if (checked.invalidCount > 0) {
              // At most the first 1,000 bad rows, each quoted to 200 characters (the contract's bounds).
              const more = checked.invalidCount - checked.invalid.length;
              throw new AppError(
                400,
                'VALIDATION_FAILED',
                MESSAGES.csvIncorrect,
                {},
                {
                  invalid: checked.invalid,
                  invalidCount: checked.invalidCount,
                  ...(more > 0 ? { more: REPORT_TRUNCATION.moreRows(more) } : {}),
                },
              );
            }
            if (checked.rows.length === 0) {
              return {
                status: 'success' as const,
                message: checked.note ?? 'The file has no data rows.',
                batchId: null,
                total: 0,
              };
            }
            const rows = function* (): Generator<BatchRowInput[]> {
              for (let i = 0; i < checked.rows.length; i += 5000) yield checked.rows.slice(i, i + 5000);
            };
            const stored = upload.keep(feature);
            const batchId = await batches.create(
              {
                feature,
                command: definition.raw,
                options,
                fileName: upload.fileName,
                storedFile: stored.relative,
                iface: 'B',
                actor: principal,
                address: request.ip,
                total: checked.rows.length,
                invalid: 0,
              },
              rows(),
            );
            upload = null; // kept: the history links to it
            return {
              status: 'success' as const,
              message: BATCH_MESSAGES.uploaded,
              batchId,
              total: checked.rows.length,
            };
          } finally {
            upload?.discard();
          }
        },
      );
    }

    // ---- Progress, results, resume card ----
    app.post(
      '/api/v2/batch/progress',
      { schema: { body: batchIdRequestSchema, response: { 200: batchProgressResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        batch: toBatchProgress(await ownBatch(request, request.body.batchId)),
      }),
    );

    app.post(
      '/api/v2/batch/current',
      { schema: { body: currentBatchRequestSchema, response: { 200: currentBatchResponseSchema } } },
      async (request) => {
        const batch = await batches.current(requirePrincipal(request), request.body.statusOf);
        return { status: 'success' as const, batch: batch ? toBatchProgress(batch) : null };
      },
    );

    // A page of a batch's results after S.No. `offset`: all, found, not found, or not found for a reason.
    app.post(
      '/api/v2/batch/results',
      { schema: { body: batchResultsRequestSchema, response: { 200: batchResultsResponseSchema } } },
      async (request) => {
        const { body } = request;
        const batch = await ownBatch(request, body.batchId);
        const selection = itemSelection(body);
        const { items, total } = await batches.results(batch, selection, body);
        return { status: 'success' as const, items: items.map(toBatchResult), total };
      },
    );

    // ---- The Batches screen ----
    // Every batch the caller may read (the rule of batches.authorised, as a query), newest first.
    app.post(
      '/api/v2/batches',
      { schema: { body: batchListRequestSchema, response: { 200: batchListResponseSchema } } },
      async (request) => {
        const { items, next } = await batches.list(requirePrincipal(request), request.body);
        return { status: 'success' as const, items: items.map((batch) => toBatchListItem(batch)), next };
      },
    );

    // A batch's results (the selection) as the batch screen's CSV, streamed; the download is audited.
    app.get(
      '/api/v2/batch/export',
      { schema: { querystring: batchExportQuerySchema } },
      async (request, reply) => {
        const { query } = request;
        const principal = requirePrincipal(request);
        const batch = await ownBatch(request, query.batchId);
        const selection = itemSelection(query);
        const { total, kind, stream } = await batches.exportResults(batch, selection, {
          actor: principal,
          address: request.ip,
          filter: query.filter,
          reason: query.reason ?? null,
        });
        return reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', attachment(resultsFileName(kind, batch.file_name)))
          .header('x-total-rows', String(total))
          .header('cache-control', 'no-store')
          .send(stream);
      },
    );

    // Pause, Process (resume) and New Batch (cancel: discard), each audited (batches/service.ts).
    for (const action of ['pause', 'resume', 'cancel'] as const) {
      app.post(
        `/api/v2/batch/${action}`,
        { schema: { body: batchIdRequestSchema, response: { 200: batchProgressResponseSchema } } },
        async (request) => {
          const batch = await batches.control(
            action,
            request.body.batchId,
            requirePrincipal(request),
            request.ip,
          );
          return { status: 'success' as const, batch: toBatchProgress(batch) };
        },
      );
    }

    // ---- The spec's per-IMEI calls, for API clients that still run the browser loop ----
    app.post(
      '/api/getimeidetails.php',
      { schema: { body: imeiDetailsRequestSchema, response: { 200: imeiDetailsResponseSchema } } },
      async (request) => {
        const principal = requirePrincipal(request);
        const body = request.body;
        assertUser(principal, body.user);
        const definition = commandForAction(body.action);
        if (!definition) throw badRequest(`Unknown action: ${body.action}`);
        batches.assertMayStart(principal, definition.raw);
        const options: CommandOptions = {};
        const level = body.grade ?? body.level;
        if (definition.raw === 'GREYAPP' && level) options.level = level;
        if (definition.raw === 'NOTIFY') {
          options.message = body.message ?? '';
          options.caseType = (['Pre', 'Due', 'Post'].includes(body.template ?? '') ? body.template : 'Due') as
            | 'Pre'
            | 'Due'
            | 'Post';
        }
        try {
          await ctx.commands.issue({
            imei: body.imei,
            command: definition.raw,
            options,
            iface: 'B',
            actor: principal,
            address: request.ip,
          });
          return { message: 'found' as const };
        } catch (error) {
          // Any failure counts as 'not found', as the console expects.
          if (error instanceof AppError && error.statusCode < 500) return { message: 'not found' as const };
          throw error;
        }
      },
    );

    app.post(
      '/api/updateStatusOnServer.php',
      { schema: { body: updateStatusRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const principal = requirePrincipal(request);
        const body = request.body;
        assertUser(principal, body.user);
        // The history row belongs to the screen its statusOf names: its permission, like the batch itself.
        const definition = commandForStatusOf(body.statusOf);
        if (!definition) throw badRequest(BATCH_MESSAGES.unknownStatusOf(body.statusOf));
        batches.assertMayStart(principal, definition.raw);
        await batches.recordClientBatch({
          actor: principal,
          address: request.ip,
          statusOf: body.statusOf,
          command: definition.raw,
          fileName: body.fileName,
          lastImei: body.lastimei || null,
          isComplete: body.isComplete,
        });
        return { status: 'success', message: 'Status updated' };
      },
    );

    app.put(
      '/api/updateCommandOnServer.php',
      { schema: { body: updateCommandRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const principal = requirePrincipal(request);
        assertUser(principal, request.body.user);
        const definition = commandForAction(request.body.action);
        if (!definition) throw badRequest(`Unknown action: ${request.body.action}`);
        batches.assertMayStart(principal, definition.raw);
        const imeis = request.body.imeilist
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = imeis.find((imei) => !/^\d{15}$/.test(imei));
        if (bad) throw badRequest(`${MESSAGES.invalidImeiLength}: ${bad.slice(0, 40)}`);
        await batches.recordList({ actor: principal, address: request.ip, command: definition.raw, imeis });
        return { status: 'success', message: `${imeis.length} IMEIs recorded` };
      },
    );
  };
}
