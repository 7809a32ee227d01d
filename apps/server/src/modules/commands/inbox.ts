/**
 * The device inbox: what devices say (acknowledgements, the state they enforce, online and offline) and
 * what follows from it (a released device, a failed command's desired state, the commands that waited for
 * a device coming online, the reconcile of a reported state that differs from the desired one). Any
 * message of a device proves it online: an acknowledgement or a state from a device marked offline marks
 * it online and sends what waits, as its `online` would.
 *
 * Messages are queued and applied in arrival order, several at a time: each flush is one transaction of a
 * few set-based statements, however many messages it holds (a batch of 100,000 commands brings 200,000 of
 * them). The promise of each message settles when its flush has committed, at most INBOX_GATHER_MS after
 * it arrived when the server is not busy.
 */
import {
  type AckMessage,
  commandForState,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  type StateMessage,
} from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely, Transaction } from 'kysely';
import { inboxOrder } from '../../db/priority';
import { asSystem } from '../../db/tenant';
import { inTransaction } from '../../db/transaction';
import type { DB, DesiredCause, DeviceRow } from '../../db/types';
import {
  lockDevices,
  markReleased,
  type ReportedEntry,
  setOnlineMany,
  setReportedStates,
} from '../devices/repository';
import { commandEvents, type EventSink } from '../webhooks/events';
import { recomputeDesired } from './desired';
import type { Dispatcher } from './dispatch';
import { type AckEntry, type AckedCommand, applyAcks, pendingKeysMany } from './repository';

/** A message from a device, as the gateway hands it over. */
type DeviceMessage =
  | { kind: 'ack'; imei: string; ack: AckMessage }
  | { kind: 'state'; imei: string; message: StateMessage }
  | { kind: 'status'; imei: string; online: boolean };

/** Most device messages applied in one transaction. */
const INBOX_FLUSH_MAX = 5000;
/** How long the first message of a quiet moment waits for others before they are applied. */
const INBOX_GATHER_MS = 20;

/** A command the reconcile issues to bring a device's state to the desired one. */
export interface ReconcileCommand {
  imei: string;
  command: NonNullable<ReturnType<typeof commandForState>>;
  /** Who decided the value it restores (the command carries it; 'reconcile': no one, the initial state). */
  cause: DesiredCause;
}

export interface DeviceInboxOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  dispatcher: Dispatcher;
  /** Issues the reconcile's commands (through commands/issue.ts, as the system, priority 1). */
  issue(commands: readonly ReconcileCommand[]): Promise<void>;
  /** Keeps a background task until it settles (see CommandService.drain). */
  track(promise: Promise<unknown>): void;
  /** Webhook events of settled commands and released devices. */
  events: EventSink;
}

const desiredOf = (device: Pick<DeviceRow, 'desired_state'>): DeviceState => ({
  ...INITIAL_DEVICE_STATE,
  ...(device.desired_state ?? {}),
});

export class DeviceInbox {
  private queue: { message: DeviceMessage; resolve(): void; reject(error: unknown): void }[] = [];
  private flushing = false;

  constructor(private readonly options: DeviceInboxOptions) {}

  handleAck(imei: string, ack: AckMessage): Promise<void> {
    return this.enqueue({ kind: 'ack', imei, ack });
  }

  handleStatus(imei: string, online: boolean): Promise<void> {
    return this.enqueue({ kind: 'status', imei, online });
  }

  /**
   * A device reports what it enforces. Where that differs from the desired state and nothing is on its
   * way to fix it (e.g. a formatted phone registering again), the server issues the command that does.
   */
  handleState(imei: string, message: StateMessage): Promise<void> {
    return this.enqueue({ kind: 'state', imei, message });
  }

  private enqueue(message: DeviceMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ message, resolve, reject });
      if (!this.flushing) {
        // The first message waits a moment for others: a flush costs a handful of statements whether
        // it carries one message or thousands. Under load the flushes follow each other without a pause.
        this.flushing = true;
        this.options.track(
          asSystem(() =>
            new Promise<void>((started) => setTimeout(started, INBOX_GATHER_MS)).then(() => this.drain()),
          ),
        );
      }
    });
  }

  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        // The acknowledgements of priority commands (and their devices' other messages) first, each
        // device's messages in arrival order (db/priority.ts `inboxOrder`).
        this.queue = inboxOrder(
          this.queue,
          (q) => q.message.kind === 'ack' && (this.options.dispatcher.priorityOf(q.message.ack.id) ?? 0) > 0,
          (q) => q.message.imei,
        );
        const queued = this.queue.splice(0, INBOX_FLUSH_MAX);
        try {
          await this.flush(queued.map((q) => q.message));
          for (const q of queued) q.resolve();
        } catch (error) {
          // One bad message must not cost the others: each is applied again as a flush of its own (the
          // same statements, the same device lock order), and only the bad one fails.
          this.options.log.warn(
            { err: error, messages: queued.length },
            'device messages: applying one by one',
          );
          for (const q of queued) {
            await this.flush([q.message]).then(q.resolve, q.reject);
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Applies device messages in one transaction, then sends what waits for the devices that came online. */
  private async flush(messages: readonly DeviceMessage[]): Promise<void> {
    /** What devices said of themselves, the last word of each; an ack or a state after `offline` says online. */
    const online = new Map<string, boolean>();
    /** Devices that sent an ack or a state: connected, whatever the server had heard of them before. */
    const heard = new Set<string>();
    const acks = new Map<string, AckEntry>();
    const reported = new Map<string, ReportedEntry>();
    const stated = new Set<string>();
    for (const m of messages) {
      if (m.kind === 'status') {
        online.set(m.imei, m.online);
        continue;
      }
      heard.add(m.imei);
      if (online.get(m.imei) === false) online.set(m.imei, true);
      if (m.kind === 'ack') {
        const key = `${m.imei}|${m.ack.id}`;
        const seen = acks.get(key);
        // A command's first final word stands (later ones change nothing); DELIVERED only until then.
        if (!seen || (seen.status === 'DELIVERED' && m.ack.status !== 'DELIVERED')) {
          acks.set(key, { imei1: m.imei, id: m.ack.id, status: m.ack.status, result: m.ack.result ?? null });
        }
        if (m.ack.state) {
          reported.set(m.imei, { state: m.ack.state, appversion: reported.get(m.imei)?.appversion ?? null });
          // The state an acknowledgement carries is the device's word too: where it differs from the
          // desired state with nothing on its way (an older command resent after a newer one undid it,
          // answered 'already executed'), the reconcile sends what brings it back.
          stated.add(m.imei);
        }
      } else {
        reported.set(m.imei, {
          state: m.message.state,
          appversion: m.message.appversion ?? reported.get(m.imei)?.appversion ?? null,
        });
        stated.add(m.imei);
      }
    }
    const { events } = this.options;
    // Webhooks that want executed or failed commands get every settled one; otherwise only those with
    // consequences come back.
    const everyFinal =
      acks.size > 0 && ((await events.wants('command.executed')) || (await events.wants('command.failed')));
    let emitted = 0;
    const wanted = await inTransaction(this.options.db, async (trx) => {
      // Devices first, in IMEI order, as batch chunks and single commands take them: no deadlock.
      const locked = await lockDevices(trx, [
        ...online.keys(),
        ...[...acks.values()].map((a) => a.imei1),
        ...reported.keys(),
      ]);
      // Any message proves its device online (device-protocol.md §2): one marked offline (its `online`
      // reached no server, say during a broker restart) is online again, and what waits is sent.
      for (const device of locked) {
        if (!device.online && heard.has(device.imei1) && !online.has(device.imei1))
          online.set(device.imei1, true);
      }
      await setOnlineMany(trx, online);
      const changed = await applyAcks(trx, [...acks.values()], everyFinal);
      const imei2s = new Map<string, string | null>();
      for (const command of changed) {
        const released = await afterFinalAck(trx, command);
        if (released) imei2s.set(command.imei1, released.imei2);
      }
      emitted = await events.emit(
        trx,
        commandEvents(changed, (imei1) => imei2s.get(imei1) ?? null),
      );
      // Read after the acks' consequences, so that a failed command's device is compared with what is
      // wanted of it now.
      return setReportedStates(trx, reported, stated, INITIAL_DEVICE_STATE);
    });
    // Committed: what follows must not send the flush down the one-by-one path again.
    if (emitted > 0) events.wake();
    const cameOnline = [...online].filter(([, isOnline]) => isOnline).map(([imei]) => imei);
    await this.options.dispatcher
      .dispatchMany(cameOnline, true)
      .catch((error: unknown) =>
        this.options.log.error({ err: error }, 'dispatch to devices back online failed'),
      );
    await this.reconcile(wanted).catch((error: unknown) =>
      this.options.log.error({ err: error }, 'reconcile of reported states failed'),
    );
  }

  /** Issues the commands that bring reported states to the desired ones, where nothing pending will. */
  private async reconcile(
    devices: readonly Pick<
      DeviceRow,
      'imei1' | 'claimstatus' | 'desired_state' | 'desired_cause' | 'reported_state'
    >[],
  ): Promise<void> {
    const fixes: {
      imei: string;
      key: keyof DeviceState;
      value: DeviceState[keyof DeviceState];
      cause: DesiredCause;
    }[] = [];
    for (const device of devices) {
      if (device.claimstatus !== 'ENROLLED' || !device.reported_state) continue;
      const desired = desiredOf(device);
      // A release on its way lifts every restriction: nothing else is sent to that device meanwhile.
      if (desired.released) continue;
      const state = device.reported_state;
      for (const key of Object.keys(desired) as (keyof DeviceState)[]) {
        if (desired[key] !== state[key])
          fixes.push({
            imei: device.imei1,
            key,
            value: desired[key],
            cause: device.desired_cause?.[key]?.cause ?? 'reconcile',
          });
      }
    }
    if (fixes.length === 0) return;
    const pending = await pendingKeysMany(this.options.db, [...new Set(fixes.map((f) => f.imei))]);
    const commands: ReconcileCommand[] = [];
    for (const { imei, key, value, cause } of fixes) {
      const fix = commandForState(key, value);
      if (fix && !pending.has(`${imei}|${key}`)) commands.push({ imei, command: fix, cause });
    }
    if (commands.length > 0) await this.options.issue(commands);
  }
}

/** What a final acknowledgement implies beyond the command's own row; a release returns the device's imei2. */
async function afterFinalAck(
  trx: Transaction<DB>,
  command: AckedCommand,
): Promise<{ imei2: string | null } | undefined> {
  // A failed command no longer sets the desired state (else the reconcile would retry it forever).
  if (command.status === 'FAILED') await recomputeDesired(trx, command.imei1, command.command);
  if (command.status === 'EXECUTED' && command.command === 'RELEASE') {
    return markReleased(trx, {
      imei1: command.imei1,
      releasedBy: command.user_label,
      transactionId: command.transaction_id,
    });
  }
}
