/**
 * Webhook endpoints: an ADMIN or SUPERADMIN (in the console, or through the API with a key) registers,
 * changes, deletes and lists them, reads their deliveries and replays one. A retailer's user manages and
 * receives only that retailer's (the endpoint carries its retailer: its tenant; the lender's have none),
 * and each tenant may have MAX_ENDPOINTS. Each endpoint gets its own signing secret, shown once and kept
 * sealed (lib/sealed.ts). Every change is audited. The list shows each endpoint's circuit breaker.
 */
import { randomBytes } from 'node:crypto';
import {
  type CreateWebhookRequest,
  type UpdateWebhookRequest,
  WEBHOOK_MESSAGES,
  type WebhookDelivery as WebhookDeliveryView,
  type WebhookEndpoint,
  type WebhookEvent,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, mayIfFound, scopeFor } from '../../authz';
import { badRequest, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { seal, unseal } from '../../lib/sealed';
import { appendAudit } from '../audit/repository';
import { checkWebhookUrl } from './address';
import {
  countEndpoints,
  deleteEndpoint,
  type EndpointRow,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  requeueDelivery,
  updateEndpoint,
} from './repository';

/**
 * Endpoints one tenant may register: the lender (its lender-wide users), or one retailer (its users).
 * Each tenant has its own 20, so one retailer cannot use up another's or the lender's.
 */
const MAX_ENDPOINTS = 20;

export interface WebhookServiceOptions {
  db: Kysely<DB>;
  /** The key signing secrets are sealed with (32 bytes). */
  secretKey: Buffer;
  allowPrivate: boolean;
  giveUpAfterMs: number;
}

interface Caller {
  actor: Principal;
  address: string;
}

const context = (endpointId: number) => `webhook_endpoints:${endpointId}`;

function view(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as WebhookEvent[],
    enabled: row.enabled,
    retailerPhone: row.retailer_phone,
    createdBy: row.created_by,
    createdAt: new Date(row.created_at).toISOString(),
    ...circuit(row),
  };
}

/** The breaker as a reader sees it: an open circuit whose cool-down is over waits for its trial. */
function circuit(
  row: EndpointRow,
): Pick<WebhookEndpoint, 'circuitState' | 'circuitOpenUntil' | 'consecutiveFailures'> {
  const until = row.circuit_until ? new Date(row.circuit_until) : null;
  const open = row.circuit_state === 'open' && until !== null && until.getTime() > Date.now();
  return {
    circuitState: row.circuit_state === 'closed' ? 'closed' : open ? 'open' : 'half_open',
    circuitOpenUntil: open && until ? until.toISOString() : null,
    consecutiveFailures: row.consecutive_failures,
  };
}

export class WebhookService {
  constructor(private readonly options: WebhookServiceOptions) {}

  /** The signing secret of an endpoint, for the delivery worker. */
  openSecret = (endpointId: number, sealed: string): string | null =>
    unseal(this.options.secretKey, context(endpointId), sealed);

  async list(actor: Principal): Promise<WebhookEndpoint[]> {
    return (await listEndpoints(this.options.db, scopeFor(actor, 'webhooks'))).map(view);
  }

  private async checkUrl(url: string): Promise<void> {
    const verdict = await checkWebhookUrl(url, this.options.allowPrivate);
    if (verdict !== 'ok') throw badRequest(WEBHOOK_MESSAGES[verdict]);
  }

  async create(
    { actor, address }: Caller,
    request: CreateWebhookRequest,
  ): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const { db } = this.options;
    // A new endpoint is its creator's tenant's; the cap counts that tenant's only.
    const tenant = actor.retailerPhone;
    authorize(actor, 'webhooks', 'manage', { retailerPhone: tenant }, () =>
      notFound(WEBHOOK_MESSAGES.notFound),
    );
    await this.checkUrl(request.url);
    if ((await countEndpoints(db, tenant)) >= MAX_ENDPOINTS) throw badRequest(WEBHOOK_MESSAGES.tooMany);
    // Standard Webhooks: `whsec_` + base64 of 24 random bytes (192 bits, within its 24–64 byte range).
    const secret = `whsec_${randomBytes(24).toString('base64')}`;
    const events = [...new Set(request.events)];
    const row = await insertEndpoint(db, {
      url: request.url,
      description: request.description ?? '',
      events,
      secretSealed: (id) => seal(this.options.secretKey, context(id), secret),
      retailerPhone: tenant,
      createdBy: actor.email,
      createdByUserId: actor.userId,
    });
    await appendAudit(db, {
      actor,
      action: 'webhook.create',
      target: String(row.id),
      address,
      result: 'success',
      details: { url: row.url, events, retailerPhone: row.retailer_phone },
    });
    return { endpoint: view(row), secret };
  }

  /** The endpoint `id` if `actor` may `action` it; another tenant's answers as an unknown one. */
  private async endpointFor(actor: Principal, action: 'read' | 'manage', id: number): Promise<EndpointRow> {
    const row = await findEndpoint(this.options.db, id);
    if (!mayIfFound(actor, 'webhooks', action, row, (r) => ({ retailerPhone: r.retailer_phone })))
      throw notFound(WEBHOOK_MESSAGES.notFound);
    return row;
  }

  async update({ actor, address }: Caller, { id, ...patch }: UpdateWebhookRequest): Promise<WebhookEndpoint> {
    const { db } = this.options;
    await this.endpointFor(actor, 'manage', id);
    if (patch.url !== undefined) await this.checkUrl(patch.url);
    const row = await updateEndpoint(db, id, {
      ...patch,
      events: patch.events ? [...new Set(patch.events)] : undefined,
    });
    if (!row) throw notFound(WEBHOOK_MESSAGES.notFound);
    await appendAudit(db, {
      actor,
      action: 'webhook.update',
      target: String(id),
      address,
      result: 'success',
      details: { ...patch },
    });
    return view(row);
  }

  async remove({ actor, address }: Caller, id: number): Promise<void> {
    const { db } = this.options;
    await this.endpointFor(actor, 'manage', id);
    if (!(await deleteEndpoint(db, id))) throw notFound(WEBHOOK_MESSAGES.notFound);
    await appendAudit(db, {
      actor,
      action: 'webhook.delete',
      target: String(id),
      address,
      result: 'success',
    });
  }

  async deliveries(
    actor: Principal,
    id: number,
    query: { status?: 'PENDING' | 'DELIVERED' | 'FAILED'; limit: number; before?: number },
  ): Promise<WebhookDeliveryView[]> {
    await this.endpointFor(actor, 'read', id);
    return (await listDeliveries(this.options.db, id, query)).map((row) => ({
      id: row.id,
      messageId: row.message_id,
      event: row.event as WebhookEvent,
      status: row.status,
      attempts: row.attempts,
      lastStatusCode: row.last_status_code,
      lastError: row.last_error,
      nextAttemptAt: row.status === 'PENDING' ? new Date(row.next_attempt_at).toISOString() : null,
      createdAt: new Date(row.created_at).toISOString(),
      deliveredAt: row.delivered_at ? new Date(row.delivered_at).toISOString() : null,
      payload: row.payload,
    }));
  }

  /** Queues a delivery again, now, with its own message id (the receiver de-duplicates). */
  async replay({ actor, address }: Caller, deliveryId: number): Promise<void> {
    const { db } = this.options;
    const delivery = await findDelivery(db, deliveryId);
    if (!mayIfFound(actor, 'webhooks', 'manage', delivery, (x) => ({ retailerPhone: x.retailer_phone })))
      throw notFound(WEBHOOK_MESSAGES.deliveryNotFound);
    await requeueDelivery(db, deliveryId, this.options.giveUpAfterMs);
    await appendAudit(db, {
      actor,
      action: 'webhook.replay',
      target: String(delivery.endpoint_id),
      address,
      result: 'success',
      details: { deliveryId, messageId: delivery.message_id, event: delivery.event },
    });
  }
}
