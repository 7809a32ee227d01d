/**
 * Per-device credentials on an external Mosquitto through its dynamic security plugin
 * (src/modules/channel/dynsec.ts), against a private broker: who may connect, what a device may subscribe and publish
 * to, and that a replaced or removed credential stops working at once, open connections included.
 */
import { randomBytes, randomInt } from 'node:crypto';
import { createServer, type Socket } from 'node:net';
import { DEVICE_OFFLINE, topics } from '@lendlock/contract';
import { freePort } from '@lendlock/testkit';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  brokerAdmitsAnonymous,
  connectDynsec,
  type DeviceBrokerAuthority,
} from '../src/modules/channel/dynsec';
import {
  hasDynsec,
  type PrivateMosquitto,
  startAnonymousMosquitto,
  startPrivateMosquitto,
} from './private-mosquitto';

const randomImei = () =>
  `35${String(randomInt(1e9)).padStart(9, '0')}${String(randomInt(1e4)).padStart(4, '0')}`;
const credential = () => randomBytes(24).toString('base64url');

interface Received {
  topic: string;
  payload: string;
}

/** Connects as a device would (MQTT 3.1.1, its will on the status topic); rejects when refused. */
function connectDevice(imei: string, password: string, clientId = `lendlock-device-${imei}`) {
  return connectAs({
    clientId,
    username: imei,
    password,
    protocolVersion: 4,
    will: { topic: topics.status(imei), payload: Buffer.from(DEVICE_OFFLINE), qos: 1, retain: false },
  });
}

let brokerUrl = '';
const opened: MqttClient[] = [];

async function connectAs(options: IClientOptions): Promise<MqttClient & { inbox: Received[] }> {
  const client = await mqtt.connectAsync(brokerUrl, {
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    ...options,
  });
  opened.push(client);
  const inbox: Received[] = [];
  client.on('message', (topic, payload) => inbox.push({ topic, payload: payload.toString() }));
  return Object.assign(client, { inbox });
}

/** The CONNACK refusal code, or 'connected'. */
async function connectOutcome(imei: string, password: string, clientId?: string): Promise<unknown> {
  try {
    const client = await connectDevice(imei, password, clientId);
    await client.endAsync();
    return 'connected';
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
}

/** The SUBACK's return codes for `filter` (a refusal rejects subscribeAsync; the codes are in the error). */
async function subackCodes(client: MqttClient, filter: string): Promise<number[]> {
  try {
    return (await client.subscribeAsync(filter, { qos: 1 })).map((grant) => grant.qos);
  } catch (error) {
    const granted = (error as { packet?: { granted?: (number | object)[] } }).packet?.granted;
    if (!granted) throw error;
    return granted.map((code) => (typeof code === 'number' ? code : Number.NaN));
  }
}

const NOT_AUTHORIZED_3 = 5;
const SUBACK_FAILURE_3 = 128;

describe.runIf(hasDynsec)('device credentials on Mosquitto (dynamic security)', () => {
  let broker: PrivateMosquitto;
  let authority: DeviceBrokerAuthority;
  /** The server's identity, as the gateway subscribes (shared subscriptions). */
  let server: MqttClient & { inbox: Received[] };
  const A = randomImei();
  const B = randomImei();
  const credentialA = credential();
  const credentialB = credential();

  beforeAll(async () => {
    broker = await startPrivateMosquitto();
    brokerUrl = broker.url;
    authority = await connectDynsec({ url: broker.url, ...broker.server, timeoutMs: 5000 });
    await Promise.all([authority.provisionDevice(A, credentialA), authority.provisionDevice(B, credentialB)]);
    server = await connectAs({ ...broker.server, clientId: 'lendlock-server-test', protocolVersion: 5 });
    const granted = await server.subscribeAsync(
      ['ack', 'state', 'status'].map((kind) => `$share/test/lendlock/d/+/${kind}`),
      { qos: 1 },
    );
    expect(granted.map((g) => g.qos)).toEqual([1, 1, 1]);
  });

  afterAll(async () => {
    for (const client of opened) await client.endAsync(true).catch(() => {});
    await authority?.close();
    await broker?.stop();
  });

  /** Waits for the server identity to receive `payload` on `topic` (a marker published after a probe). */
  const serverReceives = (topic: string, payload: string) =>
    vi.waitFor(() => expect(server.inbox).toContainEqual({ topic, payload }), { timeout: 5000 });

  it('lets a provisioned device connect with its credential and its client id only', async () => {
    expect(await connectOutcome(A, credentialA)).toBe('connected');
    expect(await connectOutcome(A, `${credentialA}x`)).toBe(NOT_AUTHORIZED_3);
    expect(await connectOutcome(A, credentialB)).toBe(NOT_AUTHORIZED_3);
    expect(await connectOutcome(A, credentialA, `lendlock-device-${B}`)).toBe(NOT_AUTHORIZED_3);
    expect(await connectOutcome(A, credentialA, 'some-other-client')).toBe(NOT_AUTHORIZED_3);
    expect(await connectOutcome(B, credentialA, `lendlock-device-${A}`)).toBe(NOT_AUTHORIZED_3);
    // No anonymous access.
    await expect(connectAs({ clientId: 'anonymous-probe', protocolVersion: 4 })).rejects.toMatchObject({
      code: NOT_AUTHORIZED_3,
    });
  });

  it("confines a device's subscriptions to its own cmd topic", async () => {
    const a = await connectDevice(A, credentialA);
    const b = await connectDevice(B, credentialB);
    await b.subscribeAsync(topics.cmd(B), { qos: 1 });
    expect(await subackCodes(a, topics.cmd(A))).toEqual([1]);
    for (const filter of [
      topics.cmd(B),
      `lendlock/d/+/cmd`,
      `lendlock/d/${A}/#`,
      `lendlock/d/${B}/ack`,
      `lendlock/#`,
      '#',
      '$share/x/lendlock/d/+/cmd',
      '$SYS/#',
    ]) {
      expect(await subackCodes(a, filter), filter).toEqual([SUBACK_FAILURE_3]);
    }
    // What B is sent never reaches A; what A is sent reaches A (and, sent afterwards, marks the end).
    await server.publishAsync(topics.cmd(B), 'for-b', { qos: 1 });
    await server.publishAsync(topics.cmd(A), 'for-a', { qos: 1 });
    await vi.waitFor(() => expect(a.inbox).toContainEqual({ topic: topics.cmd(A), payload: 'for-a' }));
    await vi.waitFor(() => expect(b.inbox).toContainEqual({ topic: topics.cmd(B), payload: 'for-b' }));
    expect(a.inbox).toEqual([{ topic: topics.cmd(A), payload: 'for-a' }]);
    await a.endAsync();
    await b.endAsync();
  });

  it("confines a device's publishes to its own ack, state and status", async () => {
    const a = await connectDevice(A, credentialA);
    await a.subscribeAsync(topics.cmd(A), { qos: 1 });
    for (const kind of ['ack', 'state', 'status'] as const)
      await a.publishAsync(topics[kind](B), `forged-${kind}`, { qos: 1 });
    await a.publishAsync(topics.cmd(A), 'self-command', { qos: 1 });
    await a.publishAsync(topics.cmd(B), 'command-to-b', { qos: 1 });
    await a.publishAsync(`lendlock/d/${A}/other`, 'elsewhere', { qos: 1 });
    // Its own topics go through; published after the forged ones on the same connection, they arrive last.
    for (const kind of ['ack', 'state', 'status'] as const)
      await a.publishAsync(topics[kind](A), `own-${kind}`, { qos: 1 });
    for (const kind of ['ack', 'state', 'status'] as const)
      await serverReceives(topics[kind](A), `own-${kind}`);
    expect(server.inbox.filter((m) => m.topic.includes(B) || m.payload.startsWith('forged'))).toEqual([]);
    expect(a.inbox).toEqual([]);
    // The server's command does reach it.
    await server.publishAsync(topics.cmd(A), 'lock', { qos: 1 });
    await vi.waitFor(() => expect(a.inbox).toEqual([{ topic: topics.cmd(A), payload: 'lock' }]));
    await a.endAsync();
  });

  it('refuses an MQTT 5 device its forged publishes outright (PUBACK: not authorized)', async () => {
    const a = await connectAs({
      clientId: `lendlock-device-${A}`,
      username: A,
      password: credentialA,
      protocolVersion: 5,
    });
    await expect(a.publishAsync(topics.state(B), 'forged', { qos: 1 })).rejects.toMatchObject({ code: 135 });
    await a.publishAsync(topics.state(A), 'own-v5', { qos: 1 });
    await serverReceives(topics.state(A), 'own-v5');
    await a.endAsync();
  });

  it('replaces a credential: the old one is refused and its open connection is closed at once', async () => {
    const C = randomImei();
    const first = credential();
    const second = credential();
    await authority.provisionDevice(C, first);
    const open = await connectDevice(C, first);
    await open.subscribeAsync(topics.cmd(C), { qos: 1 });
    const closed = new Promise<void>((resolve) => open.once('close', () => resolve()));
    const started = Date.now();
    await authority.provisionDevice(C, second);
    await closed;
    expect(Date.now() - started).toBeLessThan(2000);
    expect(await connectOutcome(C, first)).toBe(NOT_AUTHORIZED_3);
    const renewed = await connectDevice(C, second);
    // The replaced role still confines it to its own topics.
    expect(await subackCodes(renewed, topics.cmd(C))).toEqual([1]);
    expect(await subackCodes(renewed, topics.cmd(A))).toEqual([SUBACK_FAILURE_3]);
    await renewed.publishAsync(topics.ack(C), 'after-replace', { qos: 1 });
    await serverReceives(topics.ack(C), 'after-replace');
    await renewed.endAsync();
  });

  it('kicks without the will: the server hears no offline status from a kicked device', async () => {
    const D = randomImei();
    const secret = credential();
    await authority.provisionDevice(D, secret);
    const open = await connectDevice(D, secret);
    const closed = new Promise<void>((resolve) => open.once('close', () => resolve()));
    await authority.provisionDevice(D, credential());
    await closed;
    // A marker from another device, published after the kick, arrives after any will would have.
    const a = await connectDevice(A, credentialA);
    await a.publishAsync(topics.status(A), 'marker-after-kick', { qos: 1 });
    await serverReceives(topics.status(A), 'marker-after-kick');
    expect(server.inbox.filter((m) => m.topic === topics.status(D))).toEqual([]);
    await a.endAsync();
    // Whereas a device that drops off the network is announced by its will (so the check above can fail).
    const dropping = await connectDevice(A, credentialA);
    dropping.stream.destroy();
    await serverReceives(topics.status(A), DEVICE_OFFLINE);
  });

  it('removes a device: its open connection is closed and it cannot connect again', async () => {
    const E = randomImei();
    const secret = credential();
    await authority.provisionDevice(E, secret);
    const open = await connectDevice(E, secret);
    const closed = new Promise<void>((resolve) => open.once('close', () => resolve()));
    await authority.removeDevice(E);
    await closed;
    expect(await connectOutcome(E, secret)).toBe(NOT_AUTHORIZED_3);
    // Idempotent; an unknown device is fine.
    await authority.removeDevice(E);
    await authority.removeDevice(randomImei());
    // And it can be enrolled again.
    await authority.provisionDevice(E, secret);
    expect(await connectOutcome(E, secret)).toBe('connected');
    await authority.removeDevice(E);
  });

  it('answers several requests in flight, each by its own correlation', async () => {
    const devices = Array.from({ length: 12 }, () => ({ imei: randomImei(), secret: credential() }));
    await Promise.all(devices.map((d) => authority.provisionDevice(d.imei, d.secret)));
    for (const d of devices) expect(await connectOutcome(d.imei, d.secret)).toBe('connected');
    // A second authority (another server instance) on the same response topic does not take the answers.
    const other = await connectDynsec({ url: broker.url, ...broker.server });
    try {
      await Promise.all(devices.flatMap((d, i) => [(i % 2 ? other : authority).removeDevice(d.imei)]));
    } finally {
      await other.close();
    }
    for (const d of devices) expect(await connectOutcome(d.imei, d.secret)).toBe(NOT_AUTHORIZED_3);
  });

  it('rejects what it must not send, and identities that may not administer', async () => {
    await expect(authority.provisionDevice('35#', credential())).rejects.toThrow(/not an imei1/);
    await expect(authority.provisionDevice('+', credential())).rejects.toThrow(/not an imei1/);
    await expect(authority.removeDevice('lendlock/d/#')).rejects.toThrow(/not an imei1/);
    await expect(authority.provisionDevice(randomImei(), '')).rejects.toThrow(/empty credential/);
    await expect(
      connectDynsec({
        url: broker.url,
        username: broker.server.username,
        password: 'wrong',
        timeoutMs: 3000,
      }),
    ).rejects.toThrow(/could not connect/);
    // A device may connect but not read the plugin's answers.
    await expect(
      connectDynsec({
        url: broker.url,
        username: A,
        password: credentialA,
        clientId: `lendlock-device-${A}`,
      }),
    ).rejects.toThrow(/may not read/);
  });

  describe('brokerAdmitsAnonymous', () => {
    it('is false for the dynsec broker and true for an anonymous one', async () => {
      expect(await brokerAdmitsAnonymous(broker.url)).toBe(false);
      // Credentials in the URL are not used: the question is about no credentials.
      const withCredentials = new URL(broker.url);
      withCredentials.username = broker.server.username;
      withCredentials.password = broker.server.password;
      expect(await brokerAdmitsAnonymous(withCredentials.toString())).toBe(false);
      const anonymous = await startAnonymousMosquitto();
      try {
        expect(await brokerAdmitsAnonymous(anonymous.url)).toBe(true);
      } finally {
        await anonymous.stop();
      }
    });

    it('is false for a closed port or a silent listener, within the timeout', async () => {
      const port = await freePort();
      let started = Date.now();
      expect(await brokerAdmitsAnonymous(`mqtt://127.0.0.1:${port}`, 1000)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1500);
      // Accepts TCP but never answers CONNECT.
      const sockets: Socket[] = [];
      const silent = createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
      await new Promise((r) => silent.once('listening', r));
      const silentPort = (silent.address() as { port: number }).port;
      started = Date.now();
      expect(await brokerAdmitsAnonymous(`mqtt://127.0.0.1:${silentPort}`, 800)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1500);
      for (const socket of sockets) socket.destroy();
      await new Promise((r) => silent.close(r));
      expect(await brokerAdmitsAnonymous('not a url', 500)).toBe(false);
    });
  });

  it('rejects a request no one answers within timeoutMs (a broker without the plugin)', async () => {
    const anonymous = await startAnonymousMosquitto();
    try {
      const lonely = await connectDynsec({
        url: anonymous.url,
        username: 'x',
        password: 'y',
        timeoutMs: 700,
      });
      const started = Date.now();
      await expect(lonely.provisionDevice(randomImei(), credential())).rejects.toThrow(/did not answer/);
      expect(Date.now() - started).toBeLessThan(1500);
      await lonely.close();
      await expect(lonely.removeDevice(randomImei())).rejects.toThrow(/closed/);
    } finally {
      await anonymous.stop();
    }
  });
});
