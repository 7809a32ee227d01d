/**
 * Webhook delivery (docs/operations.md § Webhooks). Events are written to `webhook_deliveries` in the
 * transaction of what caused them (repository.emitEvents) and sent from there by a worker on every
 * instance: each claims due deliveries under a lease (FOR UPDATE SKIP LOCKED, so two instances never send
 * one delivery at once), POSTs them signed as the Standard Webhooks specification says (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`: HMAC-SHA256 by the `standardwebhooks` package), and marks
 * them delivered on a 2xx or tries again with exponential backoff and jitter until 24 hours have passed.
 * Every attempt carries the same `webhook-id`, so a receiver that got an event whose answer was lost
 * de-duplicates the retry. Delivery is at least once. Requests go only to public addresses (address.ts).
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
  announceOfflineDevices,
  anySubscribed,
  type ClaimedDelivery,
  claimDueDeliveries,
  type EventRecord,
  emitEvents,
  failExpiredDeliveries,
  markDelivered,
  recordFailedAttempt,
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
  /** A device offline this long is announced (device.offline); 0: never. */
  offlineAfterMs: number;
}

export const DEFAULT_WEBHOOK_TIMING: WebhookTiming = {
  retryFirstMs: 5_000,
  retryMaxMs: 3_600_000,
  giveUpAfterMs: 24 * 3_600_000,
  timeoutMs: 10_000,
  pollMs: 2_000,
  offlineAfterMs: 15 * 60_000,
};

/** How long the list of subscribed events is trusted (see WebhookDelivery.emit). */
export const SUBSCRIPTIONS_TTL_MS = 2_000;
/** Deliveries one instance sends at once. */
const CONCURRENCY = 16;
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
  /** `lendlock_webhook_deliveries_total{outcome}`. */
  attempts?: Counter<'outcome'>;
}

interface Answer {
  statusCode: number | null;
  error: string | null;
}

export class WebhookDelivery implements EventSink {
  private readonly poller: Poller;

  constructor(private readonly options: WebhookDeliveryOptions) {
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

  stop(): Promise<void> {
    return this.poller.stop();
  }

  wake(): void {
    this.poller.wake();
  }

  /** Sends every due delivery (and announces devices gone offline). Never throws. */
  runOnce(): Promise<void> {
    return this.poller.runOnce();
  }

  private async drain(stopped: () => boolean): Promise<void> {
    const { db, log, timing } = this.options;
    try {
      const expired = await failExpiredDeliveries(db);
      if (expired > 0) {
        this.options.attempts?.inc({ outcome: 'given_up' }, expired);
        log.error({ deliveries: expired }, 'webhook deliveries not made before their deadline; given up');
      }
      await this.announceOffline();
      for (;;) {
        if (stopped()) return;
        const claimed = await claimDueDeliveries(db, leaseMsOf(timing), CONCURRENCY);
        if (claimed.length === 0) return;
        await Promise.all(claimed.map((delivery) => this.deliver(delivery)));
      }
    } catch (error) {
      // The database is unreachable: deliveries stay queued, the next poll tries again.
      log.warn({ err: error }, 'webhooks: could not read the queue');
    }
  }

  /** device.offline for devices offline longer than the configured time, once per disconnection. */
  private async announceOffline(): Promise<void> {
    const { db, timing } = this.options;
    if (timing.offlineAfterMs <= 0 || !(await anySubscribed(db, 'device.offline'))) return;
    while ((await announceOfflineDevices(db, timing.offlineAfterMs, 1000, timing.giveUpAfterMs)) === 1000) {
      // A thousand at a time, each thousand with its events in one transaction.
    }
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { db, log, timing } = this.options;
    const answer = await this.post(delivery);
    if (answer.statusCode !== null && answer.statusCode >= 200 && answer.statusCode < 300) {
      await markDelivered(db, delivery.id, answer.statusCode);
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
