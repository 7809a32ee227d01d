import {
  createWebhookRequestSchema,
  createWebhookResponseSchema,
  listWebhookDeliveriesRequestSchema,
  listWebhookDeliveriesResponseSchema,
  listWebhooksResponseSchema,
  replayWebhookDeliveryRequestSchema,
  statusMessageSchema,
  updateWebhookRequestSchema,
  WEBHOOK_MESSAGES,
  webhookEndpointSchema,
  webhookIdRequestSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';

/** Webhook endpoints and their deliveries (ADMIN and SUPERADMIN; a session or a key). */
export function webhookRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    const caller = (request: FastifyRequest) => ({ actor: requirePrincipal(request), address: request.ip });

    app.get(
      '/api/v2/webhooks',
      { schema: { response: { 200: listWebhooksResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.webhooks.list(requirePrincipal(request)),
      }),
    );

    app.post(
      '/api/v2/webhooks',
      { schema: { body: createWebhookRequestSchema, response: { 200: createWebhookResponseSchema } } },
      async (request) => {
        const created = await ctx.webhooks.create(caller(request), request.body);
        ctx.webhookDelivery.subscriptionsChanged();
        return { status: 'success' as const, message: WEBHOOK_MESSAGES.created, ...created };
      },
    );

    app.post(
      '/api/v2/webhooks/update',
      {
        schema: {
          body: updateWebhookRequestSchema,
          response: {
            200: z.object({
              status: z.literal('success'),
              message: z.string(),
              endpoint: webhookEndpointSchema,
            }),
          },
        },
      },
      async (request) => {
        const endpoint = await ctx.webhooks.update(caller(request), request.body);
        ctx.webhookDelivery.subscriptionsChanged();
        return { status: 'success' as const, message: WEBHOOK_MESSAGES.updated, endpoint };
      },
    );

    app.post(
      '/api/v2/webhooks/delete',
      { schema: { body: webhookIdRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.webhooks.remove(caller(request), request.body.id);
        ctx.webhookDelivery.subscriptionsChanged();
        return { status: 'success', message: WEBHOOK_MESSAGES.deleted };
      },
    );

    app.post(
      '/api/v2/webhooks/deliveries',
      {
        schema: {
          body: listWebhookDeliveriesRequestSchema,
          response: { 200: listWebhookDeliveriesResponseSchema },
        },
      },
      async (request) => {
        const { id, ...query } = request.body;
        return {
          status: 'success' as const,
          items: await ctx.webhooks.deliveries(requirePrincipal(request), id, query),
        };
      },
    );

    app.post(
      '/api/v2/webhooks/replay',
      { schema: { body: replayWebhookDeliveryRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.webhooks.replay(caller(request), request.body.deliveryId);
        ctx.webhookDelivery.wake();
        return { status: 'success', message: WEBHOOK_MESSAGES.replayed };
      },
    );
  };
}
