/**
 * The server's side of the device channel: one MQTT client (to the embedded broker or to MQTT_URL) that
 * publishes commands (QoS 1) and receives the devices' acknowledgements, state and online status. With
 * several instances the subscriptions are shared (`$share/<group>/…`), so each message is handled once.
 * After each (re)subscription it says `online` on the server status topic, and the devices announce
 * themselves again: a phone that said `online` while no server listened is not lost.
 *
 * Publishing goes through a `PublishQueue`: at most PUBLISH_WINDOW commands are on their way to the
 * broker at once (written, not yet acknowledged by PUBACK), the others wait in memory, priority work
 * first. Without it a batch dispatch wrote tens of thousands of commands into the socket at
 * once, and a release published after them waited behind all of them.
 */
import {
  type AckMessage,
  ackMessageSchema,
  type CommandMessage,
  DEVICE_ONLINE,
  parseDeviceTopic,
  SERVER_STATUS_TOPIC,
  type ServerOnline,
  type StateMessage,
  stateMessageSchema,
  TOPIC_ROOT,
  topics,
} from '@lendlock/contract';
import { corkPerTurn, mqttTracing } from '@lendlock/contract/node';
import type { FastifyBaseLogger } from 'fastify';
import mqtt, { type MqttClient } from 'mqtt';
import { currentPriority, PRIORITY_BULK } from '../../db/priority';

export interface GatewayHandlers {
  onAck(imei: string, ack: AckMessage): Promise<void>;
  onState(imei: string, state: StateMessage): Promise<void>;
  onStatus(imei: string, online: boolean): Promise<void>;
  /** Called after every (re)connection to the broker, to send what waited meanwhile. */
  onConnected(): void;
}

export interface Gateway {
  readonly connected: boolean;
  /**
   * Resolves when the broker has accepted the message (PUBACK); rejects when it could not be sent.
   * `priority` (commands.priority; by default that of the work running now, db/priority.ts) decides its
   * place in the publish queue and travels in the message (device-protocol.md §3), so that a device
   * executes it before batch work it has queued.
   */
  publish(imei: string, message: CommandMessage, options?: { priority?: number }): Promise<void>;
  /**
   * The priority a command published by this gateway had, if above batch work; undefined otherwise. For
   * the inbox: the acknowledgement of a priority command is applied first (device-channel.ts).
   */
  priorityOf(commandId: string): number | undefined;
  close(): Promise<void>;
}

export interface GatewayOptions {
  url: string;
  username?: string | undefined;
  password?: string | undefined;
  /** Shared-subscription group; null subscribes directly (a single instance, e.g. the embedded broker). */
  sharedGroup: string | null;
  clientId: string;
  log: FastifyBaseLogger;
  handlers: GatewayHandlers;
  /** Commands on their way to the broker at once (default PUBLISH_WINDOW). */
  publishWindow?: number;
  /**
   * The spread of the devices' announcements asked for on the server status topic after each
   * (re)subscription (contract `announceWithinMs`: from the number of devices); 1 s when absent or failing.
   */
  announceWithinMs?: () => Promise<number>;
}

/** Commands written to the broker and not yet acknowledged (PUBACK), at most. */
export const PUBLISH_WINDOW = 500;
/** When priority and batch publishes both wait, every BULK_SHARE-th free slot goes to batch work. */
export const BULK_SHARE = 4;
/** Ids of priority commands remembered (for `priorityOf`), the oldest forgotten first. */
const PRIORITY_IDS_KEPT = 10_000;

interface QueuedPublish {
  priority: number;
  /** The device: a device's commands leave in the order they were queued. */
  key: string;
  send(done: (error?: Error) => void): void;
  resolve(): void;
  reject(error: Error): void;
}

/**
 * A bounded window of publishes in flight with two waiting lines in front of it: priority work
 * (priority above PRIORITY_BULK) and batch work, each first come, first served. A free slot goes to the
 * priority line, except that every `bulkShare`-th slot handed out while both lines wait goes to the
 * batch line: batch work keeps moving however many priority publishes arrive. A priority publish for a
 * device that still has batch publishes waiting joins the batch line behind them: a device's commands
 * reach it in the order they were issued (a later UNLOCK never overtakes an earlier LOCK). A publish that fails (the
 * broker refused it, the connection dropped) rejects its own promise only, frees its slot, and the line
 * moves on: nothing else is lost or held up.
 */
export class PublishQueue {
  private readonly urgent: QueuedPublish[] = [];
  private readonly bulk: QueuedPublish[] = [];
  private urgentHead = 0;
  private bulkHead = 0;
  private inFlight = 0;
  private handedToUrgent = 0;
  /** Batch publishes waiting, per device. */
  private readonly bulkWaiting = new Map<string, number>();

  constructor(
    private readonly window: number,
    private readonly bulkShare = BULK_SHARE,
  ) {}

  /** Publishes waiting for a slot. */
  get waiting(): number {
    return this.urgent.length - this.urgentHead + (this.bulk.length - this.bulkHead);
  }

  get sending(): number {
    return this.inFlight;
  }

  /**
   * Queues `send` for device `key` (`send` calls `done` once the broker answered); settles with its
   * outcome.
   */
  push(priority: number, key: string, send: QueuedPublish['send']): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const item = { priority, key, send, resolve, reject };
      if (priority > PRIORITY_BULK && !this.bulkWaiting.has(key)) this.urgent.push(item);
      else {
        this.bulk.push(item);
        this.bulkWaiting.set(key, (this.bulkWaiting.get(key) ?? 0) + 1);
      }
      this.pump();
    });
  }

  /** Rejects everything still waiting (the connection is gone; the callers put their commands back). */
  failWaiting(error: Error): void {
    const waiting = [...this.urgent.slice(this.urgentHead), ...this.bulk.slice(this.bulkHead)];
    this.urgent.length = 0;
    this.bulk.length = 0;
    this.urgentHead = 0;
    this.bulkHead = 0;
    this.bulkWaiting.clear();
    for (const item of waiting) item.reject(error);
  }

  private next(): QueuedPublish | undefined {
    const urgentWaits = this.urgentHead < this.urgent.length;
    const bulkWaits = this.bulkHead < this.bulk.length;
    if (urgentWaits && (!bulkWaits || this.handedToUrgent < this.bulkShare - 1)) {
      this.handedToUrgent = bulkWaits ? this.handedToUrgent + 1 : 0;
      return this.take(this.urgent, 'urgentHead');
    }
    this.handedToUrgent = 0;
    if (!bulkWaits) return undefined;
    const item = this.take(this.bulk, 'bulkHead');
    if (item) {
      const left = (this.bulkWaiting.get(item.key) ?? 1) - 1;
      if (left > 0) this.bulkWaiting.set(item.key, left);
      else this.bulkWaiting.delete(item.key);
    }
    return item;
  }

  private take(line: QueuedPublish[], head: 'urgentHead' | 'bulkHead'): QueuedPublish | undefined {
    const item = line[this[head]];
    this[head] += 1;
    // Compact now and then instead of shifting an array of 100,000 on every publish.
    if (this[head] > 1024 && this[head] * 2 > line.length) {
      line.splice(0, this[head]);
      this[head] = 0;
    }
    return item;
  }

  private pump(): void {
    while (this.inFlight < this.window) {
      const item = this.next();
      if (!item) return;
      this.inFlight += 1;
      let settled = false;
      const done = (error?: Error) => {
        if (settled) return;
        settled = true;
        this.inFlight -= 1;
        if (error) item.reject(error);
        else item.resolve();
        this.pump();
      };
      try {
        item.send(done);
      } catch (error) {
        done(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }
}

export function connectGateway(options: GatewayOptions): Gateway {
  const { handlers, log } = options;
  // An external broker is spoken to in MQTT 5 with the largest receive maximum: in 3.1.1 a broker holds each
  // client to its own window (Mosquitto: 20 in flight and 1,000 queued, then it DROPS QoS 1 messages), so
  // a burst of device acknowledgements beyond it would be lost. The embedded broker (Aedes) speaks 3.1.1
  // and has no such window.
  const external = options.sharedGroup !== null;
  const client: MqttClient = mqtt.connect(options.url, {
    clientId: options.clientId,
    username: options.username,
    password: options.password,
    clean: true,
    reconnectPeriod: 1000,
    connectTimeout: 5000,
    protocolVersion: external ? 5 : 4,
    ...(external ? { properties: { receiveMaximum: 65535 } } : {}),
    // Commands are the database's: a publish that cannot reach the broker fails instead of waiting in memory.
    queueQoSZero: false,
    ...mqttTracing(),
  });
  const prefix = options.sharedGroup ? `$share/${options.sharedGroup}/` : '';
  const subscriptions = ['ack', 'state', 'status'].map((kind) => `${prefix}${TOPIC_ROOT}/+/${kind}`);

  /**
   * Subscribed (again): every device that said `online` while this instance was not listening (a broker
   * restart, a lost connection) is asked to say it again (device-protocol.md §2). Its announcement comes
   * after the subscription, so it is heard; a device that connects after this message announces itself
   * after it anyway.
   */
  const askDevicesToAnnounce = async () => {
    const within = await (options.announceWithinMs?.() ?? Promise.resolve(1000)).catch((error: unknown) => {
      log.warn({ err: error }, 'device channel: could not size the announcement window');
      return 1000;
    });
    const message: ServerOnline = { status: 'online', announceWithinMs: within };
    client.publish(SERVER_STATUS_TOPIC, JSON.stringify(message), { qos: 1, retain: false }, (error) => {
      if (error)
        log.error({ err: error }, 'device channel: could not ask the devices to announce themselves');
    });
  };

  client.on('connect', () => {
    client.subscribe(subscriptions, { qos: 1 }, (error) => {
      if (error) {
        log.error({ err: error }, 'device channel: subscribe failed');
        return;
      }
      void askDevicesToAnnounce();
      handlers.onConnected();
    });
  });
  client.on('error', (error) => log.warn({ err: error }, 'device channel error'));
  corkPerTurn(client);
  client.on('offline', () => log.warn('device channel: broker unreachable; commands stay queued'));
  const queue = new PublishQueue(options.publishWindow ?? PUBLISH_WINDOW);
  // Commands waiting for a slot when the connection drops fail now (their callers put them back to
  // QUEUED), rather than wait in memory for a connection that may not come back.
  client.on('close', () => queue.failWaiting(new Error('broker not connected')));
  /** Ids of the priority commands published, with their priority (insertion order: oldest first). */
  const priorities = new Map<string, number>();

  client.on('message', (topic, payload) => {
    const parsed = parseDeviceTopic(topic);
    if (!parsed) return;
    const text = payload.toString('utf8');
    const handle = async () => {
      if (parsed.kind === 'status') return handlers.onStatus(parsed.imei, text === DEVICE_ONLINE);
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        log.warn(
          { imei: parsed.imei, kind: parsed.kind },
          'device channel: ignored a message that is not JSON',
        );
        return;
      }
      if (parsed.kind === 'ack') {
        const ack = ackMessageSchema.safeParse(json);
        if (ack.success) return handlers.onAck(parsed.imei, ack.data);
      } else if (parsed.kind === 'state') {
        const state = stateMessageSchema.safeParse(json);
        if (state.success) return handlers.onState(parsed.imei, state.data);
      }
      log.warn({ imei: parsed.imei, kind: parsed.kind }, 'device channel: ignored a malformed message');
    };
    handle().catch((error: unknown) =>
      log.error({ err: error, imei: parsed.imei }, 'device channel: handling failed'),
    );
  });

  return {
    get connected() {
      return client.connected;
    },
    publish(imei, message, publishOptions) {
      if (!client.connected) return Promise.reject(new Error('broker not connected'));
      const priority = publishOptions?.priority ?? currentPriority();
      if (priority > PRIORITY_BULK) {
        priorities.delete(message.id);
        priorities.set(message.id, priority);
        if (priorities.size > PRIORITY_IDS_KEPT) priorities.delete(priorities.keys().next().value as string);
      }
      // The priority rides along (optional in the protocol): a device that queues commands runs it first.
      const payload = JSON.stringify(priority > PRIORITY_BULK ? { ...message, priority } : message);
      return queue.push(priority, imei, (done) => {
        if (!client.connected) return done(new Error('broker not connected'));
        client.publish(topics.cmd(imei), payload, { qos: 1 }, (error) => done(error ?? undefined));
      });
    },
    priorityOf: (commandId) => priorities.get(commandId),
    close: () => new Promise((resolve) => client.end(false, {}, () => resolve())),
  };
}
