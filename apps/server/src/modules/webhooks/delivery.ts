/**
 * Webhook delivery (docs/operations.md § Webhooks). Events are written to `webhook_deliveries` in the
 * transaction of what caused them (repository.emitEvents) and sent from there by a worker on every
 * instance: each claims due deliveries under a lease (FOR UPDATE SKIP LOCKED, so two instances never send
 * one delivery at once), POSTs them signed as the Standard Webhooks specification says (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 by the `standardwebhooks` package), and marks
 * them delivered on a 2xx or tries again with exponential backoff and jitter until 24 hours have passed.
 * Every attempt carries the same `webhook-id`, so a receiver that got an event whose answer was lost
 * de-duplicates the retry. Delivery is at least once. Requests go only to public addresses (address.ts).
 *
 * One endpoint's trouble stays its own:
 * - A pool, not rounds: at most LIMITS.total attempts at once per instance, and a slot is refilled as soon
 *   as its attempt ends; at most LIMITS.perEndpoint at once to one endpoint and LIMITS.perTenant to one
 *   tenant's endpoints (the lender's, or one retailer's), and a claim skips those at their limit. So a
 *   retailer's twelve endpoints that never answer hold at most its 16 slots until their timeout, and the
 *   lender's deliveries go on at once. drain() is the worker's one entry point (attempts start in it).
 * - A circuit breaker per endpoint, in the database so every instance agrees: after `breakerFailures`
 *   failed attempts in a row the endpoint is open, not attempted for `breakerCooldownMs` (its deliveries
 *   wait, PENDING, not counted as attempts, their deadline unchanged); then one delivery is its trial
 *   (half-open): a success closes the circuit, a failure opens it again.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { WebhookEvent } from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import ipaddr from 'ipaddr.js';
import type { Kysely } from 'kysely';
import type { Counter } from 'prom-client';
import { Webhook } from 'standardwebhooks';
import { asSystemWithin } from '../../db/tenant';
import type { DB } from '../../db/types';
import { Poller } from '../../lib/poller';
import { BlockedAddressError, guardedLookup, isPublicAddress } from './address';
import type { EventSink } from './events';
import {
  type ClaimedDelivery,
  closeCircuit,
  type DueDelivery,
  type EventRecord,
  emitEvents,
  failExpiredDeliveries,
  leaseDeliveries,
  lockDueDeliveries,
  markDelivered,
  recordEndpointFailure,
  recordFailedAttempt,
  startTrials,
  subscribedEvents,
} from './repository';

export interface WebhookTiming {
  /** The first retry's delay; each next one doubles, up to `retryMaxMs`. */
  retryFirstMs: number;
  retryMaxMs: number;
  /** After this, a delivery not yet made is given up (24 hours by default). */
  giveUpAfterMs: number;
  /** One attempt's limit (connect, send, answer). */
  timeoutMs: number;
  pollMs: number;
  /** An endpoint's circuit opens after this many failed attempts in a row… */
  breakerFailures: number;
  /** …for this long; then one attempt is its trial. */
  breakerCooldownMs: number;
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
  retryFirstMs: 5_000,
  retryMaxMs: 3_600_000,
  giveUpAfterMs: 24 * 3_600_000,
  timeoutMs: 10_000,
  pollMs: 2_000,
  breakerFailures: 5,
  breakerCooldownMs: 60_000,
};

/** Attempts under way at once, on one instance. */
export interface DeliveryLimits {
  total: number;
  perEndpoint: number;
  /** To the endpoints of one tenant: the lender's, or one retailer's (up to 20 endpoints each). */
  perTenant: number;
}

export const LIMITS: DeliveryLimits = { total: 64, perEndpoint: 4, perTenant: 16 };

/** How long the list of subscribed events is trusted (see WebhookDelivery.emit). */
export const SUBSCRIPTIONS_TTL_MS = 2_000;
/** Longer than an attempt can take, so a delivery is never sent twice at once. */
const leaseMsOf = (timing: WebhookTiming) => timing.timeoutMs * 3 + 5_000;
/** A receiver's answer is read up to this much (to free the connection), then dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * The wait before attempt `attempts + 1`: exponential (first, 2×first, 4×first, … at most max), with
 * jitter of ±25 %, so receivers coming back from an outage are not hit by every instance at the same
 * instant. `random` is injectable for tests.
 */
export function retryDelayMs(attempts: number, timing: WebhookTiming, random = Math.random): number {
  const base = Math.min(timing.retryFirstMs * 2 ** Math.max(0, attempts - 1), timing.retryMaxMs);
  return Math.round(base * (0.75 + random() * 0.5));
}

/** The signing secret of an endpoint, unsealed (see service.ts). */
export type SecretOpener = (endpointId: number, sealed: string) => string | null;

export interface WebhookDeliveryOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  openSecret: SecretOpener;
  allowPrivate: boolean;
  timing: WebhookTiming;
  limits?: DeliveryLimits;
  /** `lendlock_webhook_deliveries_total{outcome}`. */
  attempts?: Counter<'outcome'>;
}

/** What is under way on this instance: how many attempts, to each endpoint and to each tenant. */
export interface UnderWay {
  total: number;
  byEndpoint: Map<number, number>;
  /** By `retailer_phone`: null is the lender. */
  byTenant: Map<string | null, number>;
}

const bump = <K>(counts: Map<K, number>, key: K, by: number) => {
  const n = (counts.get(key) ?? 0) + by;
  if (n === 0) counts.delete(key);
  else counts.set(key, n);
};

/**
 * Which of the due deliveries (oldest first) to claim without passing the limits, given what is under
 * way; an endpoint's trial is its only attempt.
 */
export function pickDeliveries(
  due: readonly DueDelivery[],
  underWay: UnderWay,
  limits: DeliveryLimits,
): DueDelivery[] {
  const byEndpoint = new Map(underWay.byEndpoint);
  const byTenant = new Map(underWay.byTenant);
  const picked: DueDelivery[] = [];
  for (const delivery of due) {
    if (underWay.total + picked.length >= limits.total) break;
    const endpointLimit = delivery.trial ? 1 : limits.perEndpoint;
    if ((byEndpoint.get(delivery.endpoint_id) ?? 0) >= endpointLimit) continue;
    if ((byTenant.get(delivery.retailer_phone) ?? 0) >= limits.perTenant) continue;
    bump(byEndpoint, delivery.endpoint_id, 1);
    bump(byTenant, delivery.retailer_phone, 1);
    picked.push(delivery);
  }
  return picked;
}

interface Answer {
  statusCode: number | null;
  error: string | null;
}

export class WebhookDelivery implements EventSink {
  private readonly poller: Poller;
  private readonly limits: DeliveryLimits;
  private readonly attempts = new Set<Promise<void>>();
  private readonly underWay: UnderWay = { total: 0, byEndpoint: new Map(), byTenant: new Map() };
  /** When expired deliveries were last looked for (at most every pollMs). */
  private sweptAt = 0;

  constructor(private readonly options: WebhookDeliveryOptions) {
    this.limits = options.limits ?? LIMITS;
    // The one entry point of the worker: every pollMs, when woken, and when an attempt frees its slot.
    this.poller = new Poller((stopped) => this.drain(stopped), options.timing.pollMs);
  }

  /**
   * Writes events' deliveries in `db` (the caller's transaction); `wake()` once it has committed. Events
   * nobody subscribes to cost nothing: which events have subscribers is read at most every
   * SUBSCRIPTIONS_TTL_MS (at once after a change on this instance), so an endpoint registered on another
   * instance receives the events from at most that long after its registration.
   */
  async emit(db: Kysely<DB>, events: readonly EventRecord[]): Promise<number> {
    if (events.length === 0) return 0;
    // Read with the caller's transaction: on PGlite the database has one connection, which it holds.
    const subscribed = await this.subscriptions(db);
    const wanted = events.filter((event) => subscribed.has(event.type));
    // Every subscribed endpoint, the lender's included, whoever's transaction this is (db/tenant.ts).
    return wanted.length === 0
      ? 0
      : asSystemWithin(db, (d) => emitEvents(d, wanted, this.options.timing.giveUpAfterMs));
  }

  /** Whether some endpoint subscribes to `type` (as far as emit knows: see there). */
  async wants(type: WebhookEvent): Promise<boolean> {
    return (await this.subscriptions(this.options.db)).has(type);
  }

  /** An endpoint changed on this instance: read the subscriptions again before the next event. */
  subscriptionsChanged(): void {
    this.subscribed = null;
  }

  private subscribed: { events: Set<string>; at: number } | null = null;

  /**
   * The subscribed events, read with `db` when what is known is older than SUBSCRIPTIONS_TTL_MS. Only a
   * read's result is shared, never a read under way: on PGlite one connection serves every query, and a
   * transaction waiting for a read queued behind it would wait for ever.
   */
  private async subscriptions(db: Kysely<DB>): Promise<Set<string>> {
    const known = this.subscribed;
    if (known && Date.now() - known.at <= SUBSCRIPTIONS_TTL_MS) return known.events;
    const at = Date.now();
    const events = await asSystemWithin(db, subscribedEvents);
    if (!this.subscribed || this.subscribed.at < at) this.subscribed = { events, at };
    return events;
  }

  start(): void {
    this.poller.start();
  }

  /** Stops claiming, and waits for the attempts under way (each ends by its timeout at the latest). */
  async stop(): Promise<void> {
    await this.poller.stop();
    await Promise.all(this.attempts);
  }

  wake(): void {
    this.poller.wake();
  }

  /** Sends every due delivery, waiting for the attempts. Never throws. */
  async runOnce(): Promise<void> {
    await this.poller.runOnce();
    while (this.attempts.size > 0) {
      await Promise.race(this.attempts);
      await this.poller.runOnce();
    }
  }

  /** Fills the free slots with due deliveries and starts them (not waiting for them). */
  private async drain(stopped: () => boolean): Promise<void> {
    const { db, log, timing } = this.options;
    try {
      if (Date.now() - this.sweptAt >= timing.pollMs) {
        this.sweptAt = Date.now();
        const expired = await failExpiredDeliveries(db);
        if (expired > 0) {
          this.options.attempts?.inc({ outcome: 'given_up' }, expired);
          log.error({ deliveries: expired }, 'webhook deliveries not made before their deadline; given up');
        }
      }
      if (stopped() || this.underWay.total >= this.limits.total) return;
      for (const delivery of await this.claim()) this.begin(delivery);
    } catch (error) {
      // The database is unreachable: deliveries stay queued, the next poll tries again.
      log.warn({ err: error }, 'webhooks: could not read the queue');
    }
  }

  /**
   * Claims what fits the free slots, in one transaction: locks the due deliveries of the endpoints not at
   * their limit, picks within the limits, starts the trials of open circuits, and leases the picked.
   */
  private claim(): Promise<ClaimedDelivery[]> {
    const leaseMs = leaseMsOf(this.options.timing);
    const full = [...this.underWay.byEndpoint]
      .filter(([, n]) => n >= this.limits.perEndpoint)
      .map(([id]) => id);
    return this.options.db.transaction().execute(async (trx) => {
      const picked = pickDeliveries(
        await lockDueDeliveries(trx, this.limits.perEndpoint, full),
        this.underWay,
        this.limits,
      );
      const trials = new Set(
        await startTrials(
          trx,
          picked.filter((d) => d.trial).map((d) => d.endpoint_id),
          leaseMs,
        ),
      );
      const ids = picked.filter((d) => !d.trial || trials.has(d.endpoint_id)).map((d) => d.id);
      return leaseDeliveries(trx, ids, leaseMs);
    });
  }

  /** Starts an attempt in a slot; when it ends the slot is free and the worker claims again. */
  private begin(delivery: ClaimedDelivery): void {
    const { byEndpoint, byTenant } = this.underWay;
    const count = (by: 1 | -1) => {
      this.underWay.total += by;
      bump(byEndpoint, delivery.endpoint_id, by);
      bump(byTenant, delivery.retailer_phone, by);
    };
    count(1);
    const attempt: Promise<void> = this.deliver(delivery)
      .catch((error: unknown) =>
        // Not recorded (the database went away): the delivery is due again when its lease ends.
        this.options.log.warn(
          { err: error, deliveryId: delivery.id },
          'webhooks: could not record an attempt',
        ),
      )
      .finally(() => {
        count(-1);
        this.attempts.delete(attempt);
        this.poller.wake();
      });
    this.attempts.add(attempt);
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { db, log, timing } = this.options;
    const answer = await this.post(delivery);
    if (answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300) {
      await markDelivered(db, delivery.id, answer.statusCode);
      if (delivery.consecutive_failures > 0 || delivery.circuit_state !== 'closed')
        await closeCircuit(db, delivery.endpoint_id);
      this.options.attempts?.inc({ outcome: 'delivered' });
      return;
    }
    const error = answer.error ?? `HTTP ${answer.statusCode}`;
    const outcome = await recordFailedAttempt(db, delivery.id, {
      statusCode: answer.statusCode,
      error,
      delayMs: retryDelayMs(delivery.attempts, timing),
      // A secret that no longer opens (SECRETS_KEY changed without re-sealing) cannot be fixed by waiting.
      permanent: answer.error === SECRET_UNREADABLE,
    });
    this.options.attempts?.inc({ outcome: outcome === 'failed' ? 'given_up' : 'retry' });
    if (
      await recordEndpointFailure(db, delivery.endpoint_id, timing.breakerFailures, timing.breakerCooldownMs)
    )
      log.warn(
        {
          endpointId: delivery.endpoint_id,
          failures: timing.breakerFailures,
          cooldownMs: timing.breakerCooldownMs,
        },
        'webhook endpoint keeps failing; its circuit is open',
      );
    const fields = {
      deliveryId: delivery.id,
      endpointId: delivery.endpoint_id,
      attempts: delivery.attempts,
      error,
    };
    if (outcome === 'failed') log.error(fields, 'webhook delivery given up');
    else log.warn(fields, 'webhook delivery failed; will retry');
  }

  /** One signed POST; never throws. */
  private post(delivery: ClaimedDelivery): Promise<Answer> {
    const { allowPrivate, timing } = this.options;
    const secret = this.options.openSecret(delivery.endpoint_id, delivery.secret_sealed);
    if (!secret) return Promise.resolve({ statusCode: null, error: SECRET_UNREADABLE });
    const body = JSON.stringify(delivery.payload);
    let url: URL;
    try {
      url = new URL(delivery.url);
    } catch {
      return Promise.resolve({ statusCode: null, error: 'invalid URL' });
    }
    // An address written as such is not looked up: check it here (a name is checked in the lookup).
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (!allowPrivate && ipaddr.isValid(host) && !isPublicAddress(host))
      return Promise.resolve({ statusCode: null, error: new BlockedAddressError(host, host).message });
    const timestamp = new Date();
    const signature = new Webhook(secret).sign(delivery.message_id, timestamp, body);
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<Answer>((resolve) => {
      const req = send(
        url,
        {
          method: 'POST',
          timeout: timing.timeoutMs,
          lookup: guardedLookup(allowPrivate) as never,
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'Lendlock-Webhooks/1',
            'webhook-id': delivery.message_id,
            'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
            'webhook-signature': signature,
          },
        },
        (res: IncomingMessage) => {
          let read = 0;
          res.on('data', (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) res.destroy();
          });
          const done = () => resolve({ statusCode: res.statusCode ?? null, error: null });
          res.on('end', done);
          res.on('close', done);
          res.on('error', done);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timing.timeoutMs} ms`)));
      req.on('error', (error) => resolve({ statusCode: null, error: error.message.slice(0, 500) }));
      req.end(body);
    });
  }
}

const SECRET_UNREADABLE = 'the signing secret cannot be unsealed (was SECRETS_KEY changed?)';
