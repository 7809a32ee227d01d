/**
 * Devices gone offline, announced (docs/operations.md § Webhooks): every `pollMs`, on every instance, the
 * enrolled devices offline for longer than `offlineAfterMs` get one `device.offline` event per
 * disconnection (webhooks/repository.ts `announceOfflineDevices`: two instances at once announce each
 * device once). The sweep runs only while an enabled endpoint subscribes to `device.offline`; the events
 * are written with their notices, then the webhook worker is woken to send them.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { Poller } from '../../lib/poller';
import type { EventSink } from '../webhooks/events';
import { announceOfflineDevices, anySubscribed } from '../webhooks/repository';

/** Devices announced per transaction. */
const ANNOUNCE_PAGE = 1000;

export interface OfflineAnnouncerOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** Woken after devices were announced: their events are due at once. */
  events: Pick<EventSink, 'wake'>;
  /** A device offline this long is announced (device.offline); 0: never. */
  offlineAfterMs: number;
  /** An announcement's deliveries are given up after this long, as every event's. */
  giveUpAfterMs: number;
  pollMs: number;
}

export class OfflineAnnouncer {
  private readonly poller: Poller;

  constructor(private readonly options: OfflineAnnouncerOptions) {
    this.poller = new Poller(() => this.sweep(), options.pollMs);
  }

  start(): void {
    if (this.options.offlineAfterMs > 0) this.poller.start();
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }

  /** One sweep (tests drive it). Never throws. */
  runOnce(): Promise<void> {
    return this.poller.runOnce();
  }

  /** device.offline for devices offline longer than the configured time, once per disconnection. */
  private async sweep(): Promise<void> {
    const { db, log, offlineAfterMs, giveUpAfterMs } = this.options;
    if (offlineAfterMs <= 0) return;
    try {
      if (!(await anySubscribed(db, 'device.offline'))) return;
      let announced = 0;
      for (;;) {
        // A thousand at a time, each thousand with its events in one transaction.
        const n = await announceOfflineDevices(db, offlineAfterMs, ANNOUNCE_PAGE, giveUpAfterMs);
        announced += n;
        if (n < ANNOUNCE_PAGE) break;
      }
      if (announced > 0) this.options.events.wake();
    } catch (error) {
      // The database is unreachable: the next poll looks again.
      log.warn({ err: error }, 'webhooks: could not announce offline devices');
    }
  }
}
