/**
 * Many simulated agents over a few MQTT connections, for load tests. Each device behaves as a
 * SimulatedDevice does: on a command it acknowledges DELIVERED if the command takes time
 * (`DELIVERED_FIRST`), executes it against its own state (or fails it, at `failRate`), acknowledges
 * EXECUTED (or FAILED) with its state, publishes its state, and answers an id it has already executed
 * with EXECUTED again without executing it twice. What differs is the transport: a device's messages
 * travel over one of `connections` shared connections, which needs a broker identity allowed on every
 * device topic (the embedded broker's `lendlock-loadtest`, or an anonymous broker such as a test
 * Mosquitto) instead of one credential per device.
 *
 * How commands reach the connections (`subscription`):
 * - `wildcard`: the first connection subscribes `lendlock/d/+/cmd` and hears every device;
 * - `shared`: every connection joins `$share/<group>/lendlock/d/+/cmd` and the broker spreads the
 *   commands over them (Mosquitto, EMQX, HiveMQ, VerneMQ; not Aedes);
 * - `per-device`: each connection subscribes to the `cmd` topic of each of its own devices.
 * A device's acknowledgements always leave on its own connection, so they stay in order.
 */
import { EventEmitter } from 'node:events';
import {
  type AckMessage,
  applyCommand,
  type CommandMessage,
  DELIVERED_FIRST,
  DEVICE_OFFLINE,
  DEVICE_ONLINE,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  parseDeviceTopic,
  RAW_COMMANDS,
  TOPIC_ROOT,
  topics,
} from '@lendlock/contract';
import { corkPerTurn, mqttTracing } from '@lendlock/contract/node';
import mqtt, { type MqttClient } from 'mqtt';
import { RecentIds } from './recent';

export type MultiplexSubscription = 'wildcard' | 'shared' | 'per-device';

export interface MultiplexOptions {
  /** Broker URL, e.g. mqtt://127.0.0.1:1884 */
  url: string;
  /** A broker identity allowed on every device topic (e.g. `lendlock-loadtest`); none for an anonymous broker. */
  username?: string;
  password?: string;
  /** The IMEIs (imei1) of the devices this fleet speaks for. */
  imeis: readonly string[];
  /** Connections to spread the devices over (default 4). */
  connections?: number;
  subscription?: MultiplexSubscription;
  /** Group of the `shared` subscription (default a random one). */
  sharedGroup?: string;
  /**
   * MQTT protocol version (default 4). Version 5 announces a receive maximum of 65535, so that a broker
   * does not hold the fleet to its default window for 3.1.1 clients (Mosquitto: 20 in flight, 1,000
   * queued, the rest dropped).
   */
  protocolVersion?: 4 | 5;
  /** Probability that executing a command fails on the device (0..1). */
  failRate?: number;
  random?: () => number;
  /** Publish the device's state after each command, as SimulatedDevice does (default true). */
  publishState?: boolean;
  appversion?: string;
}

export interface MultiplexStats {
  /** Command messages received, redeliveries included. */
  received: number;
  /** Commands executed (each id at most once). */
  executed: number;
  failed: number;
  /** Ids received again after they were executed (answered, not executed twice). */
  repeated: number;
}

const SUBSCRIBE_TOPICS_PER_PACKET = 1000;
/** Executed ids a multiplexed fleet remembers beyond REMEMBER_AT_LEAST_MS (over all its devices). */
const FLEET_REMEMBERED_IDS = 100_000;
/** Announcements published before waiting for the broker's acknowledgements. */
const ANNOUNCE_WINDOW = 2000;

export class MultiplexedFleet extends EventEmitter {
  readonly stats: MultiplexStats = { received: 0, executed: 0, failed: 0, repeated: 0 };
  private readonly clients: MqttClient[] = [];
  private readonly connectionOf = new Map<string, number>();
  private readonly states = new Map<string, DeviceState>();
  /**
   * Command ids executed, over the whole fleet (ids are unique per command): the last FLEET_REMEMBERED_IDS,
   * and every one of the last REMEMBER_AT_LEAST_MS (recent.ts).
   */
  private readonly executed: RecentIds<true>;
  private readonly group: string;

  constructor(private readonly options: MultiplexOptions) {
    super();
    const connections = Math.max(1, options.connections ?? 4);
    options.imeis.forEach((imei, index) => {
      this.connectionOf.set(imei, index % connections);
    });
    this.executed = new RecentIds<true>(FLEET_REMEMBERED_IDS);
    this.group = options.sharedGroup ?? `sim${Math.random().toString(36).slice(2, 10)}`;
  }

  get size(): number {
    return this.options.imeis.length;
  }

  /** The state a device enforces now. */
  stateOf(imei: string): DeviceState {
    return this.states.get(imei) ?? INITIAL_DEVICE_STATE;
  }

  /** Opens the connections and subscribes; resolves when every subscription is granted. */
  async start(): Promise<void> {
    const count = Math.max(1, this.options.connections ?? 4);
    const subscription = this.options.subscription ?? 'per-device';
    for (let index = 0; index < count; index++) {
      const client = mqtt.connect(this.options.url, {
        clientId: `lendlock-mux-${this.group}-${index}`,
        username: this.options.username,
        password: this.options.password,
        clean: true,
        reconnectPeriod: 1000,
        connectTimeout: 10_000,
        protocolVersion: this.options.protocolVersion ?? 4,
        ...(this.options.protocolVersion === 5 ? { properties: { receiveMaximum: 65535 } } : {}),
        ...mqttTracing(),
      });
      client.on('message', (topic, payload) => this.onMessage(topic, payload));
      corkPerTurn(client);
      this.clients.push(client);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`connection ${index} timed out`)), 15_000);
        client.once('connect', () => {
          clearTimeout(timer);
          resolve();
        });
        client.once('error', (error) => {
          clearTimeout(timer);
          reject(error);
        });
      });
      const filters =
        subscription === 'wildcard'
          ? index === 0
            ? [`${TOPIC_ROOT}/+/cmd`]
            : []
          : subscription === 'shared'
            ? [`$share/${this.group}/${TOPIC_ROOT}/+/cmd`]
            : this.options.imeis.filter((imei) => this.connectionOf.get(imei) === index).map(topics.cmd);
      for (let i = 0; i < filters.length; i += SUBSCRIBE_TOPICS_PER_PACKET) {
        await subscribe(client, filters.slice(i, i + SUBSCRIBE_TOPICS_PER_PACKET));
      }
    }
  }

  /**
   * Says `online` (or `offline`) for every device, as an agent does after connecting, with its state
   * when `withState`. Resolves when the broker has accepted every message.
   */
  async announce(
    online = true,
    options: { withState?: boolean; imeis?: readonly string[] } = {},
  ): Promise<void> {
    const imeis = options.imeis ?? this.options.imeis;
    let window: Promise<void>[] = [];
    for (const imei of imeis) {
      const client = this.clientOf(imei);
      if (!client) continue;
      window.push(publish(client, topics.status(imei), online ? DEVICE_ONLINE : DEVICE_OFFLINE));
      if (online && options.withState)
        window.push(publish(client, topics.state(imei), this.stateMessage(imei)));
      if (window.length >= ANNOUNCE_WINDOW) {
        await Promise.all(window);
        window = [];
      }
    }
    await Promise.all(window);
  }

  /** Closes every connection (devices simply vanish; call `announce(false)` first to say so). */
  async stop(): Promise<void> {
    await Promise.all(
      this.clients.map((client) => new Promise<void>((resolve) => client.end(false, {}, () => resolve()))),
    );
    this.clients.length = 0;
  }

  private clientOf(imei: string): MqttClient | undefined {
    const index = this.connectionOf.get(imei);
    return index === undefined ? undefined : this.clients[index];
  }

  private stateMessage(imei: string): string {
    return JSON.stringify({ state: this.stateOf(imei), appversion: this.options.appversion ?? '3.2.1' });
  }

  private ack(client: MqttClient, imei: string, message: AckMessage): void {
    client.publish(topics.ack(imei), JSON.stringify(message), { qos: 1 });
  }

  private onMessage(topic: string, payload: Buffer): void {
    const parsed = parseDeviceTopic(topic);
    if (parsed?.kind !== 'cmd') return;
    const imei = parsed.imei;
    const client = this.clientOf(imei);
    if (!client) return; // another fleet's device (a shared broker)
    const command = parseCommand(payload);
    if (!command) return;
    this.stats.received++;
    if (this.executed.has(command.id)) {
      // QoS 1 redelivery or a resend: already done, say so again, do nothing twice.
      this.stats.repeated++;
      this.ack(client, imei, {
        id: command.id,
        status: 'EXECUTED',
        state: this.stateOf(imei),
        result: 'already executed',
      });
      return;
    }
    if (DELIVERED_FIRST.has(command.command)) this.ack(client, imei, { id: command.id, status: 'DELIVERED' });
    this.executed.set(command.id, true);
    const fails = (this.options.random ?? Math.random)() < (this.options.failRate ?? 0);
    if (fails) {
      this.stats.failed++;
      this.ack(client, imei, {
        id: command.id,
        status: 'FAILED',
        result: 'simulated failure',
        state: this.stateOf(imei),
      });
    } else {
      const state = applyCommand(this.stateOf(imei), command.command, command.options);
      this.states.set(imei, state);
      this.stats.executed++;
      this.ack(client, imei, { id: command.id, status: 'EXECUTED', state });
    }
    if (this.options.publishState !== false)
      client.publish(topics.state(imei), this.stateMessage(imei), { qos: 1 });
    this.emit('command', imei, command);
  }
}

const COMMANDS: ReadonlySet<string> = new Set(RAW_COMMANDS);

/**
 * A command message, checked by hand rather than through its zod schema: this process speaks for many
 * thousands of devices on the machine it measures, so its own cost is kept low. It accepts what the
 * schema accepts for the fields the device uses (id, command, options).
 */
function parseCommand(payload: Buffer): CommandMessage | null {
  let message: Partial<CommandMessage>;
  try {
    message = JSON.parse(payload.toString('utf8')) as Partial<CommandMessage>;
  } catch {
    return null;
  }
  if (typeof message?.id !== 'string' || message.id.length === 0 || message.id.length > 64) return null;
  if (typeof message.command !== 'string' || !COMMANDS.has(message.command)) return null;
  const options = message.options ?? {};
  if (typeof options !== 'object' || options === null) return null;
  return { id: message.id, command: message.command, options, issuedAt: String(message.issuedAt ?? '') };
}

function subscribe(client: MqttClient, filters: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    client.subscribe(filters, { qos: 1 }, (error, granted) => {
      if (error) return reject(error);
      const refused = (granted ?? []).filter((g) => g.qos === 128);
      if (refused.length > 0) return reject(new Error(`subscription refused: ${refused[0]?.topic}`));
      resolve();
    });
  });
}

function publish(client: MqttClient, topic: string, payload: string): Promise<void> {
  return new Promise((resolve, reject) => {
    client.publish(topic, payload, { qos: 1 }, (error) => (error ? reject(error) : resolve()));
  });
}
