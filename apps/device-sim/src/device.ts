/**
 * One simulated Android agent: registers over HTTPS with its device key (docs/device-protocol.md §1: a
 * nonce, signed by the key, proves a registration again), holds an MQTT session with its own credential,
 * executes commands against a real state model, acknowledges them (EXECUTED or FAILED; DELIVERED first
 * for the commands that take time, `DELIVERED_FIRST`), publishes its state, ignores command ids it has
 * already executed, and can drop offline and come back.
 */

import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { EventEmitter } from 'node:events';
import {
  type AckMessage,
  announceDelayMs,
  applyCommand,
  type CommandMessage,
  commandMessageSchema,
  DELIVERED_FIRST,
  DEVICE_OFFLINE,
  DEVICE_ONLINE,
  type DeviceRegistration,
  type DeviceRegistrationResponse,
  type DeviceState,
  deviceClientId,
  ENROLLMENT_SECRET_HEADER,
  INITIAL_DEVICE_STATE,
  registrationChallenge,
  SERVER_STATUS_TOPIC,
  topics,
} from '@lendlock/contract';
import mqtt, { type MqttClient } from 'mqtt';
import { HISTORY_LIMIT, pushCapped, RecentIds } from './recent';

export interface DeviceOptions {
  /** Server base URL, e.g. http://localhost:8080 */
  server: string;
  enrollmentSecret: string;
  /** Probability that executing a command fails. */
  failRate?: number;
  random?: () => number;
  /** Overrides the MQTT URL the server hands out (e.g. tests against another broker). */
  mqttUrl?: string;
  /** The device key's private half (a real agent keeps it in the Android Keystore); generated if absent. */
  deviceKey?: KeyObject;
  /** An agent of before device keys: registers on the secret alone, with no key (tests). */
  keyless?: boolean;
  /** An Android key attestation chain for the key, attested with this nonce as its challenge (tests). */
  attest?: (publicKey: string, nonce: string) => Promise<string[]> | string[];
}

export interface Credentials {
  credential: string;
  mqttUrl: string;
  /** The device key's private half, PKCS#8 PEM (kept with the credential, as a Keystore would keep it). */
  privateKey?: string;
}

/** A refused registration: the server's status and error code. */
export class RegistrationError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
    this.name = 'RegistrationError';
  }
}

const newDeviceKey = (): KeyObject => generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;

export class SimulatedDevice extends EventEmitter {
  state: DeviceState = { ...INITIAL_DEVICE_STATE };
  /** The last HISTORY_LIMIT command messages received, redeliveries included, oldest first. */
  readonly received: CommandMessage[] = [];
  /** Command messages received over the agent's life (`received` keeps only the last ones). */
  receivedCount = 0;
  /**
   * How many times each recent command id was executed (must stay at most 1); also the ids the agent
   * de-duplicates against (recent.ts: the last REMEMBERED_IDS, and every one of REMEMBER_AT_LEAST_MS).
   */
  readonly executions = new RecentIds<number>();
  /** Commands executed over the agent's life. */
  executedCount = 0;
  /** The last HISTORY_LIMIT acknowledgements published, in order. */
  readonly acks: AckMessage[] = [];
  /** Recent ids that failed, with why: a redelivery gets the same answer. */
  private readonly failures = new RecentIds<string>();
  private client: MqttClient | null = null;
  /** A re-announcement the server asked for, waiting for its moment. */
  private announcing: NodeJS.Timeout | null = null;
  credentials: Credentials | null = null;
  /** The server's answer to the last registration. */
  lastRegistration: DeviceRegistrationResponse | null = null;
  /**
   * Tests: the agent stops right after acknowledging DELIVERED for the next command, before executing it
   * (as a phone whose agent crashed would), and drops off the network.
   */
  crashAfterNextDelivery = false;

  /** The device key (private half). */
  deviceKey: KeyObject;

  constructor(
    readonly profile: DeviceRegistration,
    private readonly options: DeviceOptions,
  ) {
    super();
    this.deviceKey = options.deviceKey ?? newDeviceKey();
  }

  /** The device key's public half as the server takes it: SPKI DER, base64. */
  get publicKey(): string {
    return createPublicKey(this.deviceKey).export({ format: 'der', type: 'spki' }).toString('base64');
  }

  /** Restores saved credentials, with the device key kept beside them. */
  restore(credentials: Credentials): void {
    this.credentials = credentials;
    if (credentials.privateKey) this.deviceKey = createPrivateKey(credentials.privateKey);
  }

  get imei(): string {
    return this.profile.imei1;
  }

  get online(): boolean {
    return this.client?.connected ?? false;
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    const response = await fetch(new URL(path, this.options.server), {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [ENROLLMENT_SECRET_HEADER]: this.options.enrollmentSecret,
      },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as T & { message?: string; code?: string };
    if (!response.ok) {
      throw new RegistrationError(
        response.status,
        answer.code,
        `registration of ${this.imei} failed: ${response.status} ${answer.message ?? ''}`,
      );
    }
    return answer;
  }

  /**
   * Registers (again): asks for a nonce, signs it with the device key (which proves a registration of an
   * enrolled device; on a first one it proves the agent holds the key it enrols), and sends the key.
   */
  async register(): Promise<Credentials> {
    let proof = {};
    if (!this.options.keyless) {
      const { nonce } = await this.post<{ nonce: string }>('/device/v1/nonce', { imei1: this.imei });
      const publicKey = this.publicKey;
      const signature = sign('sha256', Buffer.from(registrationChallenge(this.imei, nonce)), this.deviceKey);
      proof = {
        publicKey,
        nonce,
        signature: signature.toString('base64'),
        ...(this.options.attest ? { attestation: await this.options.attest(publicKey, nonce) } : {}),
      };
    }
    const body = await this.post<DeviceRegistrationResponse>('/device/v1/register', {
      ...this.profile,
      ...proof,
    });
    this.lastRegistration = body;
    this.credentials = {
      credential: body.credential,
      mqttUrl: this.options.mqttUrl ?? body.mqttUrl,
      ...(this.options.keyless
        ? {}
        : { privateKey: this.deviceKey.export({ format: 'pem', type: 'pkcs8' }).toString() }),
    };
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
      clientId: deviceClientId(this.imei),
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
    client.on('message', (topic, payload) => {
      if (topic === SERVER_STATUS_TOPIC) this.announceLater(payload.toString('utf8'));
      else this.onCommand(payload);
    });
    client.on('connect', () => {
      // The server status topic too: a server that (re)subscribed asks every device to announce itself.
      // A broker that refuses it (a device provisioned before the rule) still grants the command topic.
      client.subscribe([topics.cmd(this.imei), SERVER_STATUS_TOPIC], { qos: 1 }, () => {
        this.announce();
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

  /** Says `online`, then the state it enforces (device-protocol.md §2). */
  private announce(): void {
    this.client?.publish(topics.status(this.imei), DEVICE_ONLINE, { qos: 1 });
    this.publishState();
  }

  /**
   * The server (re)subscribed and asks devices to announce themselves: once, after a random delay within
   * the window it gives, so that a fleet does not answer at once; a request while one waits adds nothing.
   */
  private announceLater(payload: string): void {
    if (this.announcing) return;
    const client = this.client;
    this.announcing = setTimeout(() => {
      this.announcing = null;
      if (this.client === client && client?.connected) {
        this.announce();
        this.emit('announced');
      }
    }, announceDelayMs(payload));
  }

  private stopAnnouncing(): void {
    if (this.announcing) clearTimeout(this.announcing);
    this.announcing = null;
  }

  /** Drops off the network abruptly (the broker publishes the will: offline). */
  async dropOffline(): Promise<void> {
    this.stopAnnouncing();
    const client = this.client;
    this.client = null;
    if (client) await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
  }

  /** Leaves politely, saying so. */
  async disconnect(): Promise<void> {
    this.stopAnnouncing();
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
    pushCapped(this.acks, message, HISTORY_LIMIT);
    this.client?.publish(topics.ack(this.imei), JSON.stringify(message), { qos: 1 }, () => then?.());
  }

  private onCommand(payload: Buffer): void {
    let json: unknown;
    try {
      json = JSON.parse(payload.toString('utf8'));
    } catch {
      return;
    }
    const checked = commandMessageSchema.safeParse(json);
    if (!checked.success) {
      // A command of a newer server: say so rather than leave it pending (device-protocol.md §7).
      const id = (json as { id?: unknown }).id;
      if (typeof id === 'string' && id.length > 0)
        this.ack({ id, status: 'FAILED', result: 'unknown command', state: this.state });
      return;
    }
    const parsed = checked.data;
    pushCapped(this.received, parsed, HISTORY_LIMIT);
    this.receivedCount++;
    const failed = this.failures.get(parsed.id);
    if (failed !== undefined) {
      // Finished with FAILED: the same answer again, nothing done.
      this.ack({ id: parsed.id, status: 'FAILED', result: failed, state: this.state });
      return;
    }
    if (this.executions.has(parsed.id)) {
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
    const fails = (this.options.random ?? Math.random)() < (this.options.failRate ?? 0);
    if (fails) {
      const result = 'simulated failure';
      this.failures.set(parsed.id, result);
      this.ack({ id: parsed.id, status: 'FAILED', result, state: this.state });
    } else {
      this.executions.set(parsed.id, (this.executions.get(parsed.id) ?? 0) + 1);
      this.executedCount++;
      this.state = applyCommand(this.state, parsed.command, parsed.options);
      this.ack({ id: parsed.id, status: 'EXECUTED', state: this.state });
    }
    this.publishState();
    this.emit('command', parsed);
  }
}
