/**
 * One simulated Android agent: registers over HTTPS, holds an MQTT session with its own credential,
 * executes commands against a real state model, acknowledges them (EXECUTED or FAILED; DELIVERED first
 * for the commands that take time, `DELIVERED_FIRST`), publishes its state, ignores command ids it has
 * already executed, and can drop offline and come back.
 */
import { EventEmitter } from 'node:events';
import {
  type AckMessage,
  applyCommand,
  type CommandMessage,
  commandMessageSchema,
  DELIVERED_FIRST,
  DEVICE_OFFLINE,
  DEVICE_ONLINE,
  type DeviceRegistration,
  type DeviceRegistrationResponse,
  type DeviceState,
  ENROLLMENT_SECRET_HEADER,
  INITIAL_DEVICE_STATE,
  topics,
} from '@lendlock/contract';
import mqtt, { type MqttClient } from 'mqtt';

export interface DeviceOptions {
  /** Server base URL, e.g. http://localhost:8080 */
  server: string;
  enrollmentSecret: string;
  /** Probability that executing a command fails. */
  failRate?: number;
  random?: () => number;
  /** Overrides the MQTT URL the server hands out (e.g. tests against another broker). */
  mqttUrl?: string;
}

export interface Credentials {
  credential: string;
  mqttUrl: string;
}

export class SimulatedDevice extends EventEmitter {
  state: DeviceState = { ...INITIAL_DEVICE_STATE };
  /** Every command message received, redeliveries included. */
  readonly received: CommandMessage[] = [];
  /** How many times each command id was executed (must stay at most 1). */
  readonly executions = new Map<string, number>();
  /** Every acknowledgement published, in order. */
  readonly acks: AckMessage[] = [];
  private readonly executed = new Set<string>();
  private client: MqttClient | null = null;
  credentials: Credentials | null = null;
  /**
   * Tests: the agent stops right after acknowledging DELIVERED for the next command, before executing it
   * (as a phone whose agent crashed would), and drops off the network.
   */
  crashAfterNextDelivery = false;

  constructor(
    readonly profile: DeviceRegistration,
    private readonly options: DeviceOptions,
  ) {
    super();
  }

  get imei(): string {
    return this.profile.imei1;
  }

  get online(): boolean {
    return this.client?.connected ?? false;
  }

  async register(): Promise<Credentials> {
    const response = await fetch(new URL('/device/v1/register', this.options.server), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [ENROLLMENT_SECRET_HEADER]: this.options.enrollmentSecret,
      },
      body: JSON.stringify(this.profile),
    });
    const body = (await response.json()) as DeviceRegistrationResponse & { message?: string };
    if (!response.ok)
      throw new Error(`registration of ${this.imei} failed: ${response.status} ${body.message ?? ''}`);
    this.credentials = { credential: body.credential, mqttUrl: this.options.mqttUrl ?? body.mqttUrl };
    // A (re-)registered agent starts from a clean phone.
    this.state = { ...INITIAL_DEVICE_STATE };
    return this.credentials;
  }

  /** Connects with the device credential; resolves once subscribed and announced online. */
  async connect(credentials: Credentials | null = this.credentials): Promise<void> {
    if (!credentials) throw new Error(`${this.imei} is not registered`);
    this.credentials = credentials;
    // One connection per agent: an earlier one (say, refused since the agent registered again) ends.
    await this.dropOffline();
    const client = mqtt.connect(credentials.mqttUrl, {
      clientId: `lendlock-device-${this.imei}`,
      username: this.imei,
      password: credentials.credential,
      clean: true,
      reconnectPeriod: 1000,
      connectTimeout: 10_000,
      protocolVersion: 4,
      // Not retained: the server keeps who is online in its database; a broker keeps no stale flags.
      will: { topic: topics.status(this.imei), payload: Buffer.from(DEVICE_OFFLINE), qos: 1, retain: false },
    });
    this.client = client;
    client.on('message', (_topic, payload) => this.onCommand(payload));
    client.on('connect', () => {
      client.subscribe(topics.cmd(this.imei), { qos: 1 }, () => {
        client.publish(topics.status(this.imei), DEVICE_ONLINE, { qos: 1 });
        this.publishState();
        this.emit('online');
      });
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.imei} could not connect`)), 15_000);
      this.once('online', () => {
        clearTimeout(timer);
        resolve();
      });
      client.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
    });
  }

  /** Drops off the network abruptly (the broker publishes the will: offline). */
  async dropOffline(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (client) await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
  }

  /** Leaves politely, saying so. */
  async disconnect(): Promise<void> {
    const client = this.client;
    this.client = null;
    if (!client) return;
    if (client.connected) {
      await new Promise<void>((resolve) =>
        client.publish(topics.status(this.imei), DEVICE_OFFLINE, { qos: 1 }, () => resolve()),
      );
    }
    await new Promise<void>((resolve) => client.end(false, {}, () => resolve()));
  }

  /** Raw access for tests of the broker's confinement. */
  get mqttClient(): MqttClient | null {
    return this.client;
  }

  private publishState(): void {
    this.client?.publish(
      topics.state(this.imei),
      JSON.stringify({ state: this.state, appversion: this.profile.appversion }),
      { qos: 1 },
    );
  }

  /** Publishes an acknowledgement; `then` runs once the broker has it. */
  private ack(message: AckMessage, then?: () => void): void {
    this.acks.push(message);
    this.client?.publish(topics.ack(this.imei), JSON.stringify(message), { qos: 1 }, () => then?.());
  }

  private onCommand(payload: Buffer): void {
    let parsed: CommandMessage;
    try {
      parsed = commandMessageSchema.parse(JSON.parse(payload.toString('utf8')));
    } catch {
      return;
    }
    this.received.push(parsed);
    if (this.executed.has(parsed.id)) {
      // QoS 1 redelivery or a resend: already done, say so again, do nothing twice.
      this.ack({ id: parsed.id, status: 'EXECUTED', state: this.state, result: 'already executed' });
      return;
    }
    if (this.crashAfterNextDelivery) {
      // The acknowledgement leaves (the broker has it), then the agent is gone.
      this.crashAfterNextDelivery = false;
      this.ack(
        { id: parsed.id, status: 'DELIVERED' },
        () => void this.dropOffline().then(() => this.emit('crashed', parsed)),
      );
      return;
    }
    if (DELIVERED_FIRST.has(parsed.command)) this.ack({ id: parsed.id, status: 'DELIVERED' });
    this.executed.add(parsed.id);
    const fails = (this.options.random ?? Math.random)() < (this.options.failRate ?? 0);
    if (fails) {
      this.ack({ id: parsed.id, status: 'FAILED', result: 'simulated failure', state: this.state });
    } else {
      this.executions.set(parsed.id, (this.executions.get(parsed.id) ?? 0) + 1);
      this.state = applyCommand(this.state, parsed.command, parsed.options);
      this.ack({ id: parsed.id, status: 'EXECUTED', state: this.state });
    }
    this.publishState();
    this.emit('command', parsed);
  }
}
