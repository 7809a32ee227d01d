/**
 * Webhooks (an addition to the spec: docs/features.md § Deviations from the spec, point 14): an ADMIN or
 * SUPERADMIN registers endpoints that receive events signed as the Standard Webhooks specification says
 * (docs/operations.md § Webhooks).
 */
import { z } from 'zod';

export const WEBHOOK_EVENTS = [
  'command.executed',
  'command.failed',
  'command.expired',
  'command.cancelled',
  'batch.completed',
  'device.registered',
  'device.reregistration_requested',
  'device.deenrolled',
  'device.released',
  'device.offline',
  'collections.action.failed',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
export const webhookEventSchema = z.enum(WEBHOOK_EVENTS);

export const WEBHOOK_DELIVERY_STATUSES = ['PENDING', 'DELIVERED', 'FAILED'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

export const WEBHOOK_MESSAGES = {
  created: 'Webhook endpoint added. Copy the signing secret now: it is not shown again.',
  updated: 'Webhook endpoint updated.',
  deleted: 'Webhook endpoint deleted.',
  replayed: 'Delivery queued again.',
  notFound: 'No such webhook endpoint',
  deliveryNotFound: 'No such delivery',
  badUrl: 'The URL must start with https:// and name a host.',
  privateAddress:
    'The URL resolves to a private, loopback or link-local address: webhooks are only sent to public addresses.',
  unresolvable: 'The URL’s host name cannot be resolved.',
  noEvents: 'Choose at least one event.',
  tooMany: 'At most 20 webhook endpoints can be registered.',
} as const;

export const WEBHOOK_CIRCUIT_STATES = ['closed', 'open', 'half_open'] as const;

export const webhookUrlSchema = z
  .string()
  .trim()
  .min(1, WEBHOOK_MESSAGES.badUrl)
  .max(2000, WEBHOOK_MESSAGES.badUrl);
export const webhookDescriptionSchema = z
  .string()
  .trim()
  .max(200, 'description must be at most 200 characters');

export const createWebhookRequestSchema = z.object({
  url: webhookUrlSchema,
  events: z.array(webhookEventSchema).min(1, WEBHOOK_MESSAGES.noEvents),
  description: webhookDescriptionSchema.optional().default(''),
});
export type CreateWebhookRequest = z.input<typeof createWebhookRequestSchema>;

export const updateWebhookRequestSchema = z.object({
  id: z.number().int().positive(),
  url: webhookUrlSchema.optional(),
  events: z.array(webhookEventSchema).min(1, WEBHOOK_MESSAGES.noEvents).optional(),
  description: webhookDescriptionSchema.optional(),
  enabled: z.boolean().optional(),
});
export type UpdateWebhookRequest = z.input<typeof updateWebhookRequestSchema>;

export const webhookEndpointSchema = z.object({
  id: z.number(),
  url: z.string(),
  description: z.string(),
  events: z.array(webhookEventSchema),
  enabled: z.boolean(),
  /** Set when a retailer's ADMIN registered it: it receives that retailer's devices' events only. */
  retailerPhone: z.string().nullable(),
  createdBy: z.string(),
  createdAt: z.string(),
  /**
   * The endpoint's circuit breaker: `closed` (sent to), `open` (paused after failing attempts in a row,
   * until `circuitOpenUntil`: its deliveries wait), `half_open` (the next attempt is a trial: a success
   * closes it, a failure opens it again).
   */
  circuitState: z.enum(WEBHOOK_CIRCUIT_STATES),
  circuitOpenUntil: z.string().nullable(),
  /** Failed attempts since the endpoint last answered with a 2xx. */
  consecutiveFailures: z.number(),
});
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

export const listWebhooksResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(webhookEndpointSchema),
});
export const createWebhookResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  endpoint: webhookEndpointSchema,
  /** `whsec_…`, shown this once. */
  secret: z.string(),
});

export const webhookDeliverySchema = z.object({
  id: z.number(),
  /** The Standard Webhooks `webhook-id`: the same on every attempt, for the receiver to de-duplicate. */
  messageId: z.string(),
  event: webhookEventSchema,
  status: z.enum(WEBHOOK_DELIVERY_STATUSES),
  attempts: z.number(),
  lastStatusCode: z.number().nullable(),
  lastError: z.string().nullable(),
  nextAttemptAt: z.string().nullable(),
  createdAt: z.string(),
  deliveredAt: z.string().nullable(),
  payload: z.unknown(),
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const listWebhookDeliveriesRequestSchema = z.object({
  id: z.number().int().positive(),
  status: z.enum(WEBHOOK_DELIVERY_STATUSES).optional(),
  limit: z.number().int().min(1).max(500).optional().default(100),
  /** Deliveries with a smaller id than this (the previous page's last). */
  before: z.number().int().positive().optional(),
});
export const listWebhookDeliveriesResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(webhookDeliverySchema),
});
export const webhookIdRequestSchema = z.object({ id: z.number().int().positive() });
export const replayWebhookDeliveryRequestSchema = z.object({ deliveryId: z.number().int().positive() });
