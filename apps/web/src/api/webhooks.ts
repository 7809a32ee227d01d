/**
 * Webhooks (an addition to the spec, docs/features.md § Deviations from the spec): `GET|POST v2/webhooks`,
 * `v2/webhooks/update`, `v2/webhooks/delete`, `v2/webhooks/deliveries` and `v2/webhooks/replay`. ADMIN
 * and SUPERADMIN.
 */
import {
  type CreateWebhookRequest,
  createWebhookResponseSchema,
  listWebhookDeliveriesResponseSchema,
  listWebhooksResponseSchema,
  type StatusMessage,
  statusMessageSchema,
  type UpdateWebhookRequest,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  webhookEndpointSchema,
} from '@lendlock/contract';
import { z } from 'zod';
import type { ApiClient } from './client';

export const webhookKeys = {
  all: ['webhooks'] as const,
  list: () => [...webhookKeys.all, 'list'] as const,
  deliveries: (id: number, status: WebhookDeliveryStatus | null) =>
    [...webhookKeys.all, 'deliveries', id, status] as const,
};

export function listWebhooks(api: ApiClient, signal?: AbortSignal): Promise<WebhookEndpoint[]> {
  return api
    .call('v2/webhooks', {
      parse: (body) => listWebhooksResponseSchema.parse(body),
      ...(signal ? { signal } : {}),
    })
    .then((reply) => reply.items);
}

export interface CreatedWebhook {
  message: string;
  endpoint: WebhookEndpoint;
  /** `whsec_…`: returned by this call only. */
  secret: string;
}

export async function createWebhook(api: ApiClient, request: CreateWebhookRequest): Promise<CreatedWebhook> {
  const reply = await api.call('v2/webhooks', {
    method: 'POST',
    body: request,
    parse: (body) => createWebhookResponseSchema.parse(body),
  });
  return { message: reply.message, endpoint: reply.endpoint, secret: reply.secret };
}

const updatedSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  endpoint: webhookEndpointSchema,
});

export function updateWebhook(api: ApiClient, request: UpdateWebhookRequest): Promise<WebhookEndpoint> {
  return api
    .call('v2/webhooks/update', { method: 'POST', body: request, parse: (body) => updatedSchema.parse(body) })
    .then((reply) => reply.endpoint);
}

export function deleteWebhook(api: ApiClient, id: number): Promise<StatusMessage> {
  return api.call('v2/webhooks/delete', {
    method: 'POST',
    body: { id },
    parse: (body) => statusMessageSchema.parse(body),
  });
}

export function listDeliveries(
  api: ApiClient,
  request: { id: number; status: WebhookDeliveryStatus | null },
  signal?: AbortSignal,
): Promise<WebhookDelivery[]> {
  return api
    .call('v2/webhooks/deliveries', {
      method: 'POST',
      body: { id: request.id, ...(request.status ? { status: request.status } : {}), limit: 100 },
      parse: (body) => listWebhookDeliveriesResponseSchema.parse(body),
      ...(signal ? { signal } : {}),
    })
    .then((reply) => reply.items);
}

export function replayDelivery(api: ApiClient, deliveryId: number): Promise<StatusMessage> {
  return api.call('v2/webhooks/replay', {
    method: 'POST',
    body: { deliveryId },
    parse: (body) => statusMessageSchema.parse(body),
  });
}
