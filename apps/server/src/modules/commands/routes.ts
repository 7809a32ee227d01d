import {
  adminLockNotificationRequestSchema,
  adminLockNotificationResponseSchema,
  batchStatusRequestSchema,
  batchStatusResponseSchema,
  type CommandDefinition,
  type CommandOptions,
  cancelCommandRequestSchema,
  commandForAction,
  commandResponseSchema,
  commandStatusRequestSchema,
  commandStatusResponseSchema,
  DEVICE_ACTION_SUCCESS,
  DEVICE_ACTIONS,
  DYNAMIC_ACTIONS,
  dynamicActionSuccess,
  formattedDeviceRequestSchema,
  lockNotificationRequestSchema,
  MESSAGES,
  pendingCommandsRequestSchema,
  pendingCommandsResponseSchema,
  type ScreenName,
  statusMessageSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { badRequest, forbidden } from '../../core/errors';
import { type Principal, requirePrincipal } from '../../core/principal';
import { PRIORITY_SINGLE } from '../../db/priority';
import { toExecutedCommandRow } from '../devices/mapper';
import { COMMAND_MESSAGES } from './messages';

export const COMMAND_ROUTE_MESSAGES = {
  userMismatch: 'The user field must name the signed-in user.',
  unknownAction: (action: string) => `Unknown action: ${action}`,
  messageRequired: 'A notification needs its message and caseType (Pre, Due or Post).',
  unknownClient: 'Unknown client code',
  notYourRetailer: COMMAND_MESSAGES.notYourRetailer,
} as const;

/** The console still sends `user`; the server acts as the authenticated identity and refuses another name. */
function assertUser(principal: Principal, user: string | undefined): void {
  if (user && user.trim().toLowerCase() !== principal.email.toLowerCase())
    throw forbidden(COMMAND_ROUTE_MESSAGES.userMismatch);
}

/** Commands from the console are interface S, from an integrator key A (batches are B). */
const interfaceOf = (principal: Principal): 'A' | 'S' => (principal.credential === 'key' ? 'A' : 'S');

export function commandRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/api/locknotification.php',
      { schema: { body: lockNotificationRequestSchema, response: { 200: commandResponseSchema } } },
      async (request) => {
        const principal = requirePrincipal(request);
        const body = request.body;
        assertUser(principal, body.user);
        const definition: CommandDefinition | undefined = commandForAction(body.action);
        if (!definition) throw badRequest(COMMAND_ROUTE_MESSAGES.unknownAction(body.action));
        const graded = definition.raw === 'GREYAPP' && body.level !== undefined;
        // The permission of its screen (or of Graded Disable App), decided by the command service.
        const screens: ScreenName[] = graded ? [definition.screen, 'gradeDisableApp'] : [definition.screen];
        const options: CommandOptions = {};
        if (definition.raw === 'GREYAPP' && body.level) options.level = body.level;
        if (definition.raw === 'NOTIFY') {
          if (!body.message || !body.caseType) throw badRequest(COMMAND_ROUTE_MESSAGES.messageRequired);
          options.message = body.message;
          options.caseType = body.caseType;
        }
        let message: string = graded
          ? ' Graded Disable Apps initiated  successfully.'
          : definition.successMessage;
        let forRetailer: string | undefined;
        if (body.clientof !== undefined || body.retailerNumber !== undefined) {
          // The dynamic action table of a retailer user (its own retailer: the command service decides).
          if (body.clientof !== ctx.config.clientCode) throw forbidden(COMMAND_ROUTE_MESSAGES.unknownClient);
          forRetailer = body.retailerNumber ?? '';
          const label =
            DYNAMIC_ACTIONS.find((a) => a.action === body.action)?.label ?? definition.displayName;
          message = dynamicActionSuccess(label);
        }
        const issued = await ctx.commands.issue({
          imei: body.imei,
          command: definition.raw,
          options,
          iface: interfaceOf(principal),
          actor: principal,
          priority: PRIORITY_SINGLE,
          address: request.ip,
          screens,
          ...(forRetailer !== undefined ? { forRetailer } : {}),
        });
        return { status: 'success' as const, message, transactionId: issued.transactionId };
      },
    );

    app.post(
      '/api/formattedDevice.php',
      { schema: { body: formattedDeviceRequestSchema, response: { 200: commandResponseSchema } } },
      async (request) => {
        const principal = requirePrincipal(request);
        assertUser(principal, request.body.user);
        const definition = commandForAction('formatteddevice') as CommandDefinition;
        const issued = await ctx.commands.issue({
          imei: request.body.imei,
          command: 'FORMATTEDDEVICE',
          iface: interfaceOf(principal),
          actor: principal,
          priority: PRIORITY_SINGLE,
          address: request.ip,
        });
        return {
          status: 'success' as const,
          message: definition.successMessage,
          transactionId: issued.transactionId,
        };
      },
    );

    app.post(
      '/api/adminlocknotification.php',
      {
        schema: {
          body: adminLockNotificationRequestSchema,
          response: { 200: adminLockNotificationResponseSchema },
        },
      },
      async (request) => {
        const principal = requirePrincipal(request);
        const { imei, action, user } = request.body;
        assertUser(principal, user);
        if (!/^\d{15}$/.test(imei) && imei.toUpperCase() !== 'ALL')
          throw badRequest(MESSAGES.deviceActionImei);
        if (action === '') throw badRequest(MESSAGES.deviceActionRequired);
        const command = DEVICE_ACTIONS.find((a) => a === action.toUpperCase());
        if (!command) throw badRequest(MESSAGES.deviceActionInvalid);
        const base = {
          command,
          iface: interfaceOf(principal),
          actor: principal,
          priority: PRIORITY_SINGLE,
          address: request.ip,
        };
        if (imei.toUpperCase() === 'ALL') {
          const all = await ctx.batches.issueToAll({ command, actor: principal, address: request.ip });
          return {
            status: 'success' as const,
            message: DEVICE_ACTION_SUCCESS,
            batchId: all.batchId,
            total: all.total,
          };
        }
        const issued = await ctx.commands.issue({ ...base, imei });
        return {
          status: 'success' as const,
          message: DEVICE_ACTION_SUCCESS,
          transactionId: issued.transactionId,
          total: 1,
        };
      },
    );

    // ---- Following a command after sending it, and the pending ones of a device ----
    // Another's command, or one the caller may not see, is unknown (authz/resources/commands.ts `read`).
    app.post(
      '/api/v2/commandStatus',
      { schema: { body: commandStatusRequestSchema, response: { 200: commandStatusResponseSchema } } },
      async (request) => {
        const command = await ctx.commands.status(requirePrincipal(request), request.body.transactionId);
        return {
          status: 'success' as const,
          command: {
            transactionId: command.transaction_id,
            imei1: command.imei1,
            command: command.command,
            status: command.status,
            result: command.result,
          },
        };
      },
    );

    app.post(
      '/api/v2/batchStatus',
      { schema: { body: batchStatusRequestSchema, response: { 200: batchStatusResponseSchema } } },
      async (request) => {
        // A batch's commands are read as the batch is: its owner or a higher level (batches/service.ts).
        const rows = await ctx.batches.commandCounts(request.body.batchId, requirePrincipal(request));
        const byStatus = Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
        return { status: 'success' as const, total: rows.reduce((sum, r) => sum + Number(r.n), 0), byStatus };
      },
    );

    app.post(
      '/api/v2/pendingCommands',
      { schema: { body: pendingCommandsRequestSchema, response: { 200: pendingCommandsResponseSchema } } },
      async (request) => {
        const items = await ctx.commands.pending(requirePrincipal(request), request.body.imei);
        return { status: 'success' as const, items: items.map(toExecutedCommandRow) };
      },
    );

    app.post(
      '/api/v2/cancelCommand',
      { schema: { body: cancelCommandRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.commands.cancel(request.body.transactionId, requirePrincipal(request), request.ip);
        return { status: 'success', message: COMMAND_MESSAGES.cancelled };
      },
    );
  };
}
