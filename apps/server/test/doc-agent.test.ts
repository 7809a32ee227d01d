/**
 * Proof that docs/device-protocol.md is enough to build a device agent.
 *
 * `DocAgent` below is written from that document ALONE, with mqtt.js, node:crypto and fetch. It must not
 * import @lendlock/contract, @lendlock/device-sim or the server's code (no schemas, no topic helpers, no
 * challenge builder, no simulator): topics, payloads, the signed text, the client id, the will, the order
 * of subscribe/online/state and the acknowledgement rules all come from the document (§ = its section).
 * The test harness is used only to start a server, issue commands and read rows.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../src/lib/secrets';
import { type EmbeddedBroker, startEmbeddedBroker } from '../src/modules/channel/broker';
import { deviceCredentialHash } from '../src/modules/devices/repository';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, randomProfile, startDeviceServer, TEST_ENROLLMENT_SECRET } from './devices';

// ---------------------------------------------------------------- the agent, from the document alone

type Json = Record<string, unknown>;
/** §4: the eight things an agent enforces, at their initial values. */
const INITIAL = {
  locked: false,
  appsBlocked: false,
  greyed: null as 'level1' | 'level2' | null,
  wallpaper: false,
  alarm: false,
  cameraDisabled: false,
  credit: false,
  released: false,
};
type State = typeof INITIAL;
interface Command {
  id: string;
  command: string;
  options: { level?: 'level1' | 'level2'; message?: string; caseType?: string };
  issuedAt: string;
}
interface Ack {
  id: string;
  status: 'DELIVERED' | 'EXECUTED' | 'FAILED';
  result?: string;
  state?: State;
}
/** §4 "Set by" (the first command sets the key, the second clears it); §5 one-shots change no key. */
const EFFECTS: Record<string, (options: Command['options']) => Partial<State>> = {
  LOCK: () => ({ locked: true }),
  UNLOCK: () => ({ locked: false }),
  BLOCKAPP: () => ({ appsBlocked: true }),
  UNBLOCKAPP: () => ({ appsBlocked: false }),
  GREYAPP: (options) => ({ greyed: options.level ?? 'level1' }),
  UNGREYAPP: () => ({ greyed: null }),
  LOCKWALLPAPER: () => ({ wallpaper: true }),
  UNLOCKWALLPAPER: () => ({ wallpaper: false }),
  SETALARM: () => ({ alarm: true }),
  UNSETALARM: () => ({ alarm: false }),
  DISABLECAMERA: () => ({ cameraDisabled: true }),
  ENABLECAMERA: () => ({ cameraDisabled: false }),
  ENABLECREDIT: () => ({ credit: true }),
  REVOKECREDIT: () => ({ credit: false }),
  RELEASE: () => ({ ...INITIAL, released: true }),
  NOTIFY: () => ({}),
  REBOOT: () => ({}),
  UPDATE: () => ({}),
};
/** §3: the commands that take time, acknowledged DELIVERED on receipt and then with their outcome. */
const DELIVERED_FIRST = new Set(['REBOOT', 'UPDATE']);

class DocAgent {
  /** §1: the device key, EC P-256 (OpenSSL's name for it is prime256v1), made once. */
  readonly key = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  state: State = { ...INITIAL };
  credential?: string;
  mqttUrl?: string;
  clientId?: string;
  client?: MqttClient;
  /** §7: the ids executed, never executed twice. */
  readonly executed = new Set<string>();
  /** For the test: every command received, every execution, every ack sent. */
  readonly received: Command[] = [];
  readonly executions: string[] = [];
  readonly acks: Ack[] = [];
  readonly errors: unknown[] = [];
  /** For the test: drop the connection without a word at this point of the next command. */
  crashNext?: 'after DELIVERED' | 'before ack';
  /** For the test: how many times the agent announced itself (`online`, then its state). */
  announcements = 0;
  /** §2 "When the server comes back": an announcement the server asked for, waiting for its moment. */
  private announceTimer?: NodeJS.Timeout;
  private queue = Promise.resolve();

  constructor(
    readonly server: string,
    readonly profile: Json & { imei1: string },
  ) {}

  get imei1() {
    return this.profile.imei1;
  }
  /** §3: the server status topic, where the server asks devices to announce themselves. */
  static readonly SERVER_STATUS = 'lendlock/server/status';
  /** §3: the four topics of a device. */
  topic(leaf: 'cmd' | 'ack' | 'state' | 'status') {
    return `lendlock/d/${this.imei1}/${leaf}`;
  }

  private async post(path: string, body: Json) {
    const response = await fetch(`${this.server}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Json };
  }

  /** §1 "What an agent sends": a nonce, a signature over `lendlock-register:<imei1>:<nonce>`, the key. */
  async register() {
    const nonce = (await this.post('/device/v1/nonce', { imei1: this.imei1 })).body.nonce as string;
    const text = Buffer.from(`lendlock-register:${this.imei1}:${nonce}`, 'utf8');
    const signature = sign('sha256', text, this.key.privateKey).toString('base64'); // DER is node's default
    const publicKey = this.key.publicKey.export({ format: 'der', type: 'spki' }).toString('base64');
    const answer = await this.post('/device/v1/register', { ...this.profile, publicKey, nonce, signature });
    if (answer.status === 200) {
      this.credential = answer.body.credential as string;
      this.mqttUrl = answer.body.mqttUrl as string;
      this.clientId = answer.body.clientId as string;
    }
    return answer;
  }

  /** §2 and §8.3–5: MQTT 3.1.1 as imei1, the offline will; then subscribe (both topics), announce. */
  async connect(credential = this.credential) {
    const client = await mqtt.connectAsync(this.mqttUrl as string, {
      protocolVersion: 4,
      clientId: this.clientId ?? `lendlock-device-${this.imei1}`,
      username: this.imei1,
      password: credential,
      clean: true,
      reconnectPeriod: 0,
      will: { topic: this.topic('status'), payload: Buffer.from('offline'), qos: 1, retain: false },
    });
    this.client = client;
    client.on('message', (topic, payload) => {
      if (topic === DocAgent.SERVER_STATUS) return this.announceLater(client, payload.toString('utf8'));
      // One command at a time, in the order they came (§7: each dispatch is oldest first).
      this.queue = this.queue
        .then(() => this.handle(JSON.parse(payload.toString('utf8')) as Command))
        .catch((error: unknown) => {
          this.errors.push(error);
        });
    });
    const [granted] = await client.subscribeAsync(this.topic('cmd'), { qos: 1 });
    if (granted?.qos === 0x80) throw new Error('the broker refused the subscription');
    // §2 step 1: a refusal of the server status topic is not an error.
    await client.subscribeAsync(DocAgent.SERVER_STATUS, { qos: 1 });
    await this.announce();
  }

  /** §2 steps 2 and 3: `online`, then the state. */
  private async announce() {
    this.announcements += 1;
    await this.client?.publishAsync(this.topic('status'), 'online', { qos: 1 });
    await this.reportState();
  }

  /** §2 "When the server comes back" rule 2: once, after a random delay below `announceWithinMs`. */
  private announceLater(client: MqttClient, payload: string) {
    if (this.announceTimer) return;
    let within = 30_000;
    try {
      const message = JSON.parse(payload) as { announceWithinMs?: unknown };
      if (typeof message.announceWithinMs === 'number') within = message.announceWithinMs;
    } catch {
      // unreadable: the default window
    }
    this.announceTimer = setTimeout(() => {
      this.announceTimer = undefined;
      if (this.client === client && client.connected)
        this.announce().catch((e: unknown) => this.errors.push(e));
    }, Math.random() * within);
  }

  /** §8.6. */
  private async handle(command: Command) {
    this.received.push(command);
    if (this.executed.has(command.id)) {
      return this.ack({ id: command.id, status: 'EXECUTED', result: 'already executed', state: this.state });
    }
    if (DELIVERED_FIRST.has(command.command)) {
      await this.ack({ id: command.id, status: 'DELIVERED' });
      if (this.crash('after DELIVERED')) return;
    }
    const effect = EFFECTS[command.command];
    if (!effect) {
      // Not in the document: a name this agent does not know fails, with a reason (§6 FAILED).
      await this.ack({ id: command.id, status: 'FAILED', result: `unknown command ${command.command}` });
      return this.reportState();
    }
    this.state = { ...this.state, ...effect(command.options ?? {}) };
    this.executed.add(command.id);
    this.executions.push(command.id);
    if (this.crash('before ack')) return;
    await this.ack({ id: command.id, status: 'EXECUTED', state: this.state });
    await this.reportState();
  }

  private crash(point: DocAgent['crashNext']) {
    if (this.crashNext !== point) return false;
    this.crashNext = undefined;
    this.client?.end(true); // no DISCONNECT: an abrupt loss, the broker publishes the will
    return true;
  }

  private async ack(ack: Ack) {
    this.acks.push(ack);
    await this.client?.publishAsync(this.topic('ack'), JSON.stringify(ack), { qos: 1 });
  }

  async reportState() {
    const message = { state: this.state, appversion: this.profile.appversion };
    await this.client?.publishAsync(this.topic('state'), JSON.stringify(message), { qos: 1 });
  }

  /** §2 and §8.7: say `offline`, then disconnect cleanly. */
  async disconnect() {
    await this.client?.publishAsync(this.topic('status'), 'offline', { qos: 1 });
    await this.client?.endAsync();
  }
}

// ---------------------------------------------------------------- the proof

describe.each(databaseKinds())('an agent built from docs/device-protocol.md alone on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let agent: DocAgent;
  let replacement: EmbeddedBroker | undefined;
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded');
    agent = new DocAgent(server.url, { ...randomProfile() });
  });
  afterAll(async () => {
    for (const client of [...clients, agent?.client]) client?.end(true);
    await server?.close();
    await replacement?.close();
    await database?.close();
  });

  const device = () =>
    database.db.selectFrom('devices').selectAll().where('imei1', '=', agent.imei1).executeTakeFirstOrThrow();
  const command = (transactionId: string) =>
    database.db
      .selectFrom('commands')
      .selectAll()
      .where('transaction_id', '=', transactionId)
      .executeTakeFirstOrThrow();
  const until = (check: () => Promise<void> | void) => vi.waitFor(check, { timeout: 8000, interval: 50 });
  const online = (value: boolean) => until(async () => expect((await device()).online).toBe(value));
  const finished = (transactionId: string) =>
    until(async () => expect((await command(transactionId)).status).toBe('EXECUTED'));
  const issue = (name: 'LOCK' | 'REBOOT' | 'SETALARM') =>
    server.app.ctx.commands.issue({ imei: agent.imei1, command: name, iface: 'S', actor: null });
  const acksOf = (id: string) => agent.acks.filter((a) => a.id === id).map((a) => [a.status, a.result]);

  it('1. registers for the first time with a new key, a nonce and a signature', async () => {
    const answer = await agent.register();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      status: 'success',
      registrationstatus: 'REGISTERED',
      admittedBy: 'first',
      clientId: `lendlock-device-${agent.imei1}`,
    });
    expect(agent.credential).toMatch(/^.{32}$/);
    expect(agent.mqttUrl).toMatch(/^mqtt:\/\/localhost:\d+$/);
  });

  it('2. connects, subscribes, says online, reports its state: the server marks it online', async () => {
    await agent.connect();
    await online(true);
    await until(async () => expect((await device()).reported_state).toEqual(INITIAL));
  });

  it('3. executes LOCK (its outcome alone) and REBOOT (DELIVERED, then EXECUTED)', async () => {
    const lock = await issue('LOCK');
    await finished(lock.transactionId);
    expect(acksOf(lock.transactionId)).toEqual([['EXECUTED', undefined]]);
    const lockRow = await command(lock.transactionId);
    expect(lockRow.delivered_at).toEqual(lockRow.completed_at);

    const reboot = await issue('REBOOT');
    await finished(reboot.transactionId);
    expect(acksOf(reboot.transactionId)).toEqual([
      ['DELIVERED', undefined],
      ['EXECUTED', undefined],
    ]);
    expect(agent.state.locked).toBe(true);
    await until(async () => expect((await device()).reported_state?.locked).toBe(true));
  });

  it('4. answers a redelivered id "already executed" without executing it twice', async () => {
    // The agent executes SETALARM and drops before its ack: the command stays SENT, and the server sends
    // it again when the agent says `online` again (§7 "On online").
    agent.crashNext = 'before ack';
    const alarm = await issue('SETALARM');
    await until(() => expect(agent.executions).toContain(alarm.transactionId));
    await online(false);
    expect((await command(alarm.transactionId)).status).toBe('SENT');
    await agent.connect();
    await finished(alarm.transactionId);
    expect(agent.received.filter((c) => c.id === alarm.transactionId)).toHaveLength(2);
    expect(agent.executions.filter((id) => id === alarm.transactionId)).toHaveLength(1);
    expect(acksOf(alarm.transactionId)).toEqual([['EXECUTED', 'already executed']]);
    expect((await command(alarm.transactionId)).result).toBe('already executed');

    // A REBOOT the agent stopped between its two acks stays DELIVERED, comes again, and is executed then.
    agent.crashNext = 'after DELIVERED';
    const reboot = await issue('REBOOT');
    await until(async () => expect((await command(reboot.transactionId)).status).toBe('DELIVERED'));
    await online(false);
    await agent.connect();
    await finished(reboot.transactionId);
    expect(agent.executions.filter((id) => id === reboot.transactionId)).toHaveLength(1);
    expect(acksOf(reboot.transactionId)).toEqual([
      ['DELIVERED', undefined],
      ['DELIVERED', undefined],
      ['EXECUTED', undefined],
    ]);
    await online(true);
  });

  it('5. registers again with proof: a new credential, the old one refused, the new one connects', async () => {
    const old = agent.credential as string;
    const oldClient = agent.client as MqttClient;
    const answer = await agent.register();
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ status: 'success', admittedBy: 'signature' });
    expect(answer.body.registrationstatus).toBe('RE-REGISTERED');
    expect(agent.credential).not.toBe(old);
    // The connection open with the old credential is closed at once, and the device marked offline.
    await until(() => expect(oldClient.connected).toBe(false));
    await online(false);
    await expect(agent.connect(old)).rejects.toThrow(/bad username or password/i);
    await agent.connect();
    await online(true);
    // The desired state is kept: still locked, and nothing to reconcile.
    await until(async () => expect((await device()).reported_state?.locked).toBe(true));
  });

  it('6. an impostor (a fresh key, the same IMEI) is refused with no credential', async () => {
    const impostor = new DocAgent(server.url, { ...agent.profile, brand: 'Evil' });
    const before = await device();
    const answer = await impostor.register();
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ status: 'error', code: 'REREGISTRATION_NEEDS_APPROVAL' });
    expect(answer.body.credential).toBeUndefined();
    const after = await device();
    expect(after.public_key).toBe(before.public_key);
    expect(after.credential_hash).toBe(before.credential_hash);
    expect(after.brand).toBe(before.brand);
    expect(after.online).toBe(true);
  });

  it('7. announces itself again when the server comes back after a broker restart', async () => {
    // The phone drops (the server hears its will), the broker goes and another takes its port; the
    // phone is back before the server, whose gateway tries again a second later.
    agent.client?.end(true);
    await online(false);
    const broker = server.app.deviceChannel?.broker as EmbeddedBroker;
    await broker.close();
    replacement = await startEmbeddedBroker({
      host: '0.0.0.0',
      port: broker.port,
      service: broker.service,
      authenticateDevice: async (imei, credential) =>
        (await deviceCredentialHash(database.db, imei)) === sha256Hex(credential),
      maxPacketBytes: 65_536,
    });
    const before = agent.announcements;
    await agent.connect();
    expect(server.app.deviceChannel?.gateway.connected).toBe(false);
    // Its first announcement reached nobody; the server's `online` brings the second, which it hears.
    await online(true);
    expect(agent.announcements).toBe(before + 2);
  });

  it('8. a polite disconnect (offline, then end) marks the device offline', async () => {
    await agent.disconnect();
    await online(false);
    expect(agent.errors).toEqual([]);
  });
});
