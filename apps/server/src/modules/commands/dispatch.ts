/**
 * Dispatch: what is recorded reaches the devices. Commands recorded SENT (the device was online when they
 * were issued) are published after commit; QUEUED ones are claimed (QUEUED → SENT, SKIP LOCKED, so several
 * instances never send one twice at the same moment) when their device is online and the broker
 * reachable, and published; those the broker does not accept go back to QUEUED. Each device's commands
 * are published oldest first; when several devices' commands go at once, the devices with the most urgent
 * command (commands.priority: single 2, reconcile 1, batch 0) go first.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import type { Gateway } from '../channel/gateway';
import { commandEvents, type EventSink, NO_EVENTS } from '../webhooks/events';
import type { CommandOutcome } from './issue';
import {
  type ClaimedDeviceCommand,
  claimForDispatch,
  claimForDispatchMany,
  devicesWithWork,
  expireCommands,
  unclaim,
} from './repository';

export interface DispatcherOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** An unacknowledged SENT command is sent again after this (the device ignores ids it has executed). */
  resendAfterMs: number;
  /** Webhook events (command.expired). */
  events?: EventSink;
}

/** A command to publish, as a claim or the recording of a SENT command returns it. */
export type Publishable = Omit<ClaimedDeviceCommand, 'command' | 'options'> & {
  command: ClaimedDeviceCommand['command'];
  options: ClaimedDeviceCommand['options'] | null;
};

export class Dispatcher {
  private gateway: Gateway | null = null;

  constructor(private readonly options: DispatcherOptions) {}

  attach(gateway: Gateway): void {
    this.gateway = gateway;
  }

  /** The priority a command published through the gateway had, if above batch work (gateway.ts). */
  priorityOf(commandId: string): number | undefined {
    return this.gateway?.priorityOf(commandId);
  }

  /** Whether commands can be published now (the broker is reachable). */
  get connected(): boolean {
    return this.gateway?.connected ?? false;
  }

  /**
   * After the commit of `outcomes` (commands of `commands`, in the same order): publishes those recorded
   * SENT, and dispatches the devices online whose new command waits QUEUED behind an older one.
   */
  async afterRecorded(
    outcomes: readonly CommandOutcome[],
    commandOf: (index: number) => Pick<Publishable, 'command' | 'options'>,
  ): Promise<void> {
    const sent: Publishable[] = [];
    const waiting = new Set<string>();
    for (const [index, outcome] of outcomes.entries()) {
      if (!outcome.recorded) continue;
      if (outcome.status === 'SENT') {
        sent.push({
          id: outcome.id,
          transaction_id: outcome.transactionId,
          imei1: outcome.imei1,
          created_at: outcome.createdAt,
          priority: outcome.priority,
          ...commandOf(index),
        });
      } else if (outcome.status === 'QUEUED' && outcome.online) {
        waiting.add(outcome.imei1);
      }
    }
    await this.publishClaimed(sent);
    if (waiting.size > 0) await this.dispatchMany([...waiting]);
  }

  /** Sends the pending commands of many devices (those online), in one claim. */
  async dispatchMany(imeis: readonly string[], resendAll = false): Promise<number> {
    if (!this.gateway?.connected || imeis.length === 0) return 0;
    const claimed = await claimForDispatchMany(
      this.options.db,
      imeis,
      resendAll ? 0 : this.options.resendAfterMs,
      resendAll,
    );
    return this.publishClaimed(claimed);
  }

  /**
   * Publishes commands already marked SENT (in the given order; one connection keeps it) and puts those
   * the broker did not accept back to QUEUED, to be sent when it is reachable again.
   */
  async publishClaimed(claimed: readonly Publishable[]): Promise<number> {
    if (claimed.length === 0) return 0;
    const gateway = this.gateway;
    const results = await Promise.allSettled(
      claimed.map((c) =>
        gateway
          ? gateway.publish(
              c.imei1,
              {
                id: c.transaction_id,
                command: c.command,
                options: c.options ?? {},
                issuedAt: new Date(c.created_at).toISOString(),
              },
              { priority: Number(c.priority) },
            )
          : Promise.reject(new Error('no device channel')),
      ),
    );
    const failed = claimed.filter((_, i) => results[i]?.status === 'rejected').map((c) => c.id);
    if (failed.length > 0) {
      await unclaim(this.options.db, failed);
      this.options.log.warn({ commands: failed.length }, 'commands stay queued: broker did not accept them');
    }
    return claimed.length - failed.length;
  }

  /** Sends the pending commands of one device, if it is online and the broker is reachable. */
  async dispatch(imei1: string, resendAll = false): Promise<number> {
    const gateway = this.gateway;
    if (!gateway?.connected) return 0;
    const claimed = await claimForDispatch(
      this.options.db,
      imei1,
      resendAll ? 0 : this.options.resendAfterMs,
      resendAll,
    );
    let sent = 0;
    for (const [index, command] of claimed.entries()) {
      try {
        await gateway.publish(
          imei1,
          {
            id: command.transaction_id,
            command: command.command,
            options: command.options ?? {},
            issuedAt: new Date(command.created_at).toISOString(),
          },
          { priority: Number(command.priority) },
        );
        sent += 1;
      } catch (error) {
        // Not accepted by the broker: back to QUEUED, to be sent when it is reachable again.
        await unclaim(
          this.options.db,
          claimed.slice(index).map((c) => c.id),
        );
        this.options.log.warn({ err: error, imei1 }, 'commands stay queued: broker did not accept them');
        break;
      }
    }
    return sent;
  }

  /** One pass of housekeeping: expire old one-shots, send what waits for online devices. */
  async sweep(limit = 500): Promise<void> {
    const events = this.options.events ?? NO_EVENTS;
    const emitted = await inTransaction(this.options.db, async (trx) =>
      events.emit(trx, commandEvents(await expireCommands(trx))),
    );
    if (emitted > 0) events.wake();
    if (!this.gateway?.connected) return;
    await this.dispatchMany(await devicesWithWork(this.options.db, this.options.resendAfterMs, limit));
  }
}
