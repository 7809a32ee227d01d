import { rmSync } from 'node:fs';
import {
  batchIdRequestSchema,
  batchProgressResponseSchema,
  batchResultsRequestSchema,
  batchResultsResponseSchema,
  bulkUploadResponseSchema,
  COMMAND_DEFINITIONS,
  type CommandDefinition,
  type CommandOptions,
  commandForAction,
  currentBatchRequestSchema,
  currentBatchResponseSchema,
  imeiDetailsRequestSchema,
  imeiDetailsResponseSchema,
  MESSAGES,
  type ScreenName,
  statusMessageSchema,
  updateCommandRequestSchema,
  updateStatusRequestSchema,
  validateImeiCsv,
  validateNotifyCsv,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { sql } from 'kysely';
import type { AppContext } from '../../app';
import { hasPermission, type Principal, requirePrincipal } from '../../plugins/auth';
import { AppError, badRequest, forbidden, notFound } from '../../plugins/errors';
import { toBatchProgress, toBatchResult } from './mapper';
import type { BatchRowInput } from './service';
import { readStored, storeUpload } from './upload';

export const BATCH_MESSAGES = {
  uploaded: 'File uploaded successfully. The batch is running on the server.',
  noFile: 'Attach the CSV file as "file".',
  tooManyRows: (max: number) => `The file has more than ${max.toLocaleString('en-US')} rows.`,
  userMismatch: 'The user field must name the signed-in user.',
} as const;

/** The screens whose permission lets a principal run a definition's batch (bulkGreyCopy serves two). */
function screensFor(definition: CommandDefinition): ScreenName[] {
  return definition.raw === 'GREYAPP' ? ['disableApp', 'gradeDisableApp'] : [definition.screen];
}

function assertMay(principal: Principal, definition: CommandDefinition): void {
  if (!screensFor(definition).some((screen) => hasPermission(principal, screen)))
    throw forbidden(MESSAGES.unauthorised);
}

function assertUser(principal: Principal, user: string | undefined): void {
  if (user && user.trim().toLowerCase() !== principal.email.toLowerCase())
    throw forbidden(BATCH_MESSAGES.userMismatch);
}

/** The bulk scripts: one per definition with a batch form (bulkGreyCopy once). */
const BULK_SCRIPTS = COMMAND_DEFINITIONS.filter(
  (d, i, all) => d.batch && d.bulkScript && all.findIndex((o) => o.bulkScript === d.bulkScript) === i,
) as CommandDefinition[];

/** Validates a stored upload with the contract's validator for the command (Notify rows carry their texts). */
async function validateUpload(definition: CommandDefinition, path: string) {
  if (definition.input === 'notify') {
    const checked = await validateNotifyCsv(readStored(path));
    return {
      ...checked,
      rows: checked.valid.map(
        (r): BatchRowInput => ({
          imei: r.imei,
          name: r.name,
          amount: r.amount,
          date: r.date,
          template: r.template,
          header: r.header,
          message: r.message,
        }),
      ),
    };
  }
  const checked = await validateImeiCsv(readStored(path));
  return { ...checked, rows: checked.valid.map((imei): BatchRowInput => ({ imei })) };
}

export function batchRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const { batches } = ctx;

  const ownBatch = async (request: FastifyRequest, batchId: number) => {
    const principal = requirePrincipal(request);
    const batch = await batches.get(batchId);
    // USERs see their own batches; ADMIN and SUPERADMIN every batch.
    if (principal.userlevel === 'USER' && batch.user_id !== principal.userId) throw notFound('No such batch');
    return batch;
  };

  return async (app) => {
    for (const definition of BULK_SCRIPTS) {
      app.post(
        `/api/${definition.bulkScript}`,
        { schema: { response: { 200: bulkUploadResponseSchema } } },
        async (request) => {
          const principal = requirePrincipal(request);
          assertMay(principal, definition);
          const fields: Record<string, string> = {};
          let upload: Awaited<ReturnType<typeof storeUpload>> | null = null;
          for await (const part of request.parts()) {
            if (part.type === 'file') {
              if (part.fieldname !== 'file' || upload) {
                part.file.resume();
                continue;
              }
              upload = await storeUpload(part, ctx.config.dataDir, definition.statusOf ?? definition.screen);
            } else {
              fields[part.fieldname] = String(part.value ?? '');
            }
          }
          if (!upload) throw badRequest(BATCH_MESSAGES.noFile);
          assertUser(principal, fields.user);
          const options: CommandOptions = {};
          if (definition.raw === 'GREYAPP' && (fields.level === 'level1' || fields.level === 'level2'))
            options.level = fields.level;
          const checked = await validateUpload(definition, upload.path);
          // A refused file is not kept (only accepted batches are linked from the history).
          const refuse = (error: AppError) => {
            rmSync(upload?.path ?? '', { force: true });
            return error;
          };
          if (checked.total > ctx.config.batchMaxRows)
            throw refuse(badRequest(BATCH_MESSAGES.tooManyRows(ctx.config.batchMaxRows)));
          if (checked.invalid.length > 0) {
            throw refuse(
              new AppError(
                400,
                'VALIDATION_FAILED',
                MESSAGES.csvIncorrect,
                {},
                { invalid: checked.invalid.slice(0, 1000) },
              ),
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
          const batchId = await batches.create(
            {
              feature: definition.statusOf ?? definition.screen,
              command: definition.raw,
              options,
              fileName: upload.fileName,
              storedFile: upload.relative,
              iface: 'B',
              actor: principal,
              address: request.ip,
              total: checked.rows.length,
              invalid: 0,
            },
            rows(),
          );
          return {
            status: 'success' as const,
            message: BATCH_MESSAGES.uploaded,
            batchId,
            total: checked.rows.length,
          };
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
        const principal = requirePrincipal(request);
        const batch = await ctx.db
          .selectFrom('batches')
          .selectAll()
          .where('feature', '=', request.body.statusOf)
          .where('user_id', '=', principal.userId)
          .where('status', '=', 'incomplete')
          .orderBy('id', 'desc')
          .executeTakeFirst();
        return { status: 'success' as const, batch: batch ? toBatchProgress(batch) : null };
      },
    );

    app.post(
      '/api/v2/batch/results',
      { schema: { body: batchResultsRequestSchema, response: { 200: batchResultsResponseSchema } } },
      async (request) => {
        const batch = await ownBatch(request, request.body.batchId);
        const items = await ctx.db
          .selectFrom('batch_items')
          .selectAll()
          .where('batch_id', '=', batch.id)
          .where('seq', '>', request.body.offset)
          .orderBy('seq')
          .limit(request.body.limit)
          .execute();
        return { status: 'success' as const, items: items.map(toBatchResult), total: batch.valid };
      },
    );

    for (const [path, action] of [
      ['pause', (id: number) => batches.pause(id)],
      ['resume', (id: number) => batches.resume(id)],
      ['cancel', (id: number) => batches.cancel(id)],
    ] as const) {
      app.post(
        `/api/v2/batch/${path}`,
        { schema: { body: batchIdRequestSchema, response: { 200: batchProgressResponseSchema } } },
        async (request) => {
          const batch = await ownBatch(request, request.body.batchId);
          await action(Number(batch.id));
          return { status: 'success' as const, batch: toBatchProgress(await batches.get(Number(batch.id))) };
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
        assertMay(principal, definition);
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
          // Spec §7: any failure counts as 'not found'.
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
        const existing = await ctx.db
          .selectFrom('batches')
          .select('id')
          .where('feature', '=', body.statusOf)
          .where('file_name', '=', body.fileName)
          .where('user_id', '=', principal.userId)
          // Only batches the client runs itself (the spec's browser loop); a server-run batch keeps its own state.
          .where('stored_file', 'is', null)
          .where('feature', '!=', 'deviceaction')
          .orderBy('id', 'desc')
          .executeTakeFirst();
        const status = body.isComplete;
        if (existing) {
          await ctx.db
            .updateTable('batches')
            .set({
              last_imei: body.lastimei || null,
              updated_at: sql<Date>`now()` as unknown as Date,
              ...(status === 'complete' ? { status, completed_at: sql<Date>`now()` as unknown as Date } : {}),
            })
            .where('id', '=', existing.id)
            .where('status', '!=', 'cancelled')
            .execute();
        } else {
          // A batch the client runs itself (the spec's browser loop): recorded for the history.
          const definition = COMMAND_DEFINITIONS.find((d) => d.statusOf === body.statusOf);
          await ctx.db
            .insertInto('batches')
            .values({
              feature: body.statusOf,
              command: definition?.raw ?? 'UNKNOWN',
              file_name: body.fileName,
              interface: principal.credential === 'key' ? 'A' : 'B',
              user_label: principal.email,
              user_id: principal.userId,
              key_id: principal.keyId ?? null,
              status,
              paused: true,
              last_imei: body.lastimei || null,
              remarks: 'progress reported by the client',
              ...(status === 'complete' ? { completed_at: sql<Date>`now()` as unknown as Date } : {}),
            })
            .execute();
        }
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
        assertMay(principal, definition);
        const imeis = request.body.imeilist
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
        const bad = imeis.find((imei) => !/^\d{15}$/.test(imei));
        if (bad) throw badRequest(`${MESSAGES.invalidImeiLength}: ${bad.slice(0, 40)}`);
        await ctx.db
          .insertInto('audit_log')
          .values({
            actor_user_id: principal.userId,
            actor_key_id: principal.keyId ?? null,
            actor: principal.email,
            action: `batch.list.${definition.raw}`,
            address: request.ip,
            result: 'recorded',
            details: JSON.stringify({
              count: imeis.length,
              first: imeis[0] ?? null,
              last: imeis.at(-1) ?? null,
            }),
          })
          .execute();
        return { status: 'success', message: `${imeis.length} IMEIs recorded` };
      },
    );
  };
}
