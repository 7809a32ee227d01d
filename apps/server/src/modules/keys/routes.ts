import {
  generateKeyRequestSchema,
  generateKeyResponseSchema,
  KEY_MESSAGES,
  statusMessageSchema,
  updateKeyStatusRequestSchema,
  viewKeysResponseSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';

/** Key management, under its own base (`/keyapi/`) as the console calls it. */
export function keyRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/keyapi/keymanagement/view_keys.php',
      { schema: { response: { 200: viewKeysResponseSchema } } },
      async (request) => ctx.keys.viewKeys(requirePrincipal(request)),
    );

    app.post(
      '/keyapi/generate_key.php',
      { schema: { body: generateKeyRequestSchema, response: { 200: generateKeyResponseSchema } } },
      async (request) => {
        const created = await ctx.keys.generateKey(
          { actor: requirePrincipal(request), address: request.ip },
          { keyName: request.body.key_name, password: request.body.password, userId: request.body.user_id },
        );
        return {
          status: 'success' as const,
          message: KEY_MESSAGES.generated,
          key: created.key,
          id: created.id,
        };
      },
    );

    app.post(
      '/keyapi/keymanagement/update_key_status.php',
      { schema: { body: updateKeyStatusRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.keys.updateKeyStatus(
          { actor: requirePrincipal(request), address: request.ip },
          request.body,
        );
        return { status: 'success', message: KEY_MESSAGES.statusUpdated(request.body.status) };
      },
    );
  };
}
