/**
 * The embedded broker holds the line: a device's credential connects only with its own client id (and
 * takes over nobody's session), no client may send a packet over MQTT_MAX_PACKET_BYTES, and a device whose
 * last connection ends, however, is marked offline. And on every channel: an acknowledgement or a state
 * report is never lost for its size or content (a long result, NUL characters).
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { connect as connectTcp, type Socket } from 'node:net';
import {
  type CommandMessage,
  DEVICE_OFFLINE,
  DEVICE_ONLINE,
  INITIAL_DEVICE_STATE,
  topics,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import mqtt, { type IClientOptions, type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type EmbeddedBroker, PacketSizeGuard } from '../src/modules/channel/broker';
import { channelKinds, databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, deviceSuite, simulatedDevice, startDeviceServer } from './devices';

const LOADTEST = { username: 'lendlock-loadtest', password: 'loadtest-password-0123456789' };
const MB = 1024 * 1024;

function embeddedBroker(server: DeviceServer): EmbeddedBroker {
  const broker = server.app.deviceChannel?.broker;
  if (!broker) throw new Error('no embedded broker');
  return broker;
}

/** The CONNACK return code a connection gets (0 when admitted; the client then leaves). */
async function connackCode(url: string, options: IClientOptions): Promise<number> {
  try {
    const client = await mqtt.connectAsync(
      url,
      { protocolVersion: 4, clean: true, reconnectPeriod: 0, connectTimeout: 5000, ...options },
      false,
    );
    await client.endAsync();
    return 0;
  } catch (error) {
    return (error as { code?: number }).code ?? -1;
  }
}

/** A device connection by hand: its own client id unless told otherwise, the offline will, no reconnect. */
function deviceConnection(
  url: string,
  imei: string,
  credential: string,
  options: IClientOptions = {},
): Promise<MqttClient> {
  return mqtt.connectAsync(
    url,
    {
      clientId: `lendlock-device-${imei}`,
      username: imei,
      password: credential,
      protocolVersion: 4,
      clean: true,
      reconnectPeriod: 0,
      connectTimeout: 5000,
      will: { topic: topics.status(imei), payload: Buffer.from(DEVICE_OFFLINE), qos: 1, retain: false },
      ...options,
    },
    false,
  );
}

const closed = (client: MqttClient) => new Promise<void>((resolve) => client.once('close', () => resolve()));

// ---- A raw MQTT 3.1.1 client, to announce a packet no library would send ----

function remainingLength(length: number): Buffer {
  const bytes: number[] = [];
  let rest = length;
  do {
    let digit = rest % 128;
    rest = Math.floor(rest / 128);
    if (rest > 0) digit |= 0x80;
    bytes.push(digit);
  } while (rest > 0);
  return Buffer.from(bytes);
}

function mqttString(value: string): Buffer {
  const bytes = Buffer.from(value, 'utf8');
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function connectPacket(clientId: string, username: string, password: string): Buffer {
  // Protocol level 4, flags: username, password, clean session; keep-alive 60 s.
  const variable = Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0xc2, 0, 60])]);
  const body = Buffer.concat([variable, mqttString(clientId), mqttString(username), mqttString(password)]);
  return Buffer.concat([Buffer.from([0x10]), remainingLength(body.length), body]);
}

/** The fixed and variable header of a QoS 0 PUBLISH announcing `payloadBytes` of payload. */
function publishHeader(topic: string, payloadBytes: number): Buffer {
  const name = mqttString(topic);
  return Buffer.concat([Buffer.from([0x30]), remainingLength(name.length + payloadBytes), name]);
}

async function rawDeviceConnection(port: number, imei: string, credential: string): Promise<Socket> {
  const socket = connectTcp(port, '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  socket.write(connectPacket(`lendlock-device-${imei}`, imei, credential));
  const connack = await new Promise<Buffer>((resolve, reject) => {
    socket.once('data', resolve);
    socket.once('close', () => reject(new Error('closed before CONNACK')));
  });
  // CONNACK, remaining length 2, no session, return code 0.
  expect([...connack.subarray(0, 4)]).toEqual([0x20, 2, 0, 0]);
  return socket;
}

describe('PacketSizeGuard', () => {
  // 107 bytes (1-byte length), a 2-byte PINGREQ, then 1,008 bytes (2-byte length).
  const stream = Buffer.concat([
    publishHeader('a/b', 100),
    Buffer.alloc(100),
    Buffer.from([0xc0, 0]),
    publishHeader('a/b', 1000),
    Buffer.alloc(1000),
  ]);

  it('follows the packets across chunks of any size', () => {
    for (const size of [1, 2, 3, 7, 64, stream.length]) {
      const guard = new PacketSizeGuard(1008);
      for (let at = 0; at < stream.length; at += size)
        expect(guard.accept(stream.subarray(at, at + size))).toBe(true);
    }
  });

  it('refuses at the last length byte of the first packet over the limit, before its body', () => {
    const guard = new PacketSizeGuard(1007);
    let refusedAt = -1;
    for (let at = 0; at < stream.length && refusedAt < 0; at++)
      if (!guard.accept(stream.subarray(at, at + 1))) refusedAt = at;
    expect(refusedAt).toBe(107 + 2 + 2);
    expect(new PacketSizeGuard(65536).accept(publishHeader('a/b', 200 * MB))).toBe(false);
    // A fifth length byte is malformed.
    expect(new PacketSizeGuard(65536).accept(Buffer.from([0x30, 0x80, 0x80, 0x80, 0x80, 0x01]))).toBe(false);
  });
});

describe.each(databaseKinds())('the embedded broker on %s', (kind) => {
  const suite = deviceSuite(kind, { mqttLoadTestPassword: LOADTEST.password });
  const device = () => {
    const created = simulatedDevice(suite.server);
    suite.devices.push(created);
    return created;
  };
  const online = (imei: string, value: boolean) =>
    vi.waitFor(
      async () => {
        const row = await suite.database.db
          .selectFrom('devices')
          .select('online')
          .where('imei1', '=', imei)
          .executeTakeFirstOrThrow();
        expect(row.online).toBe(value);
      },
      { timeout: 8000, interval: 50 },
    );
  const isOnline = async (imei: string) =>
    (
      await suite.database.db
        .selectFrom('devices')
        .select('online')
        .where('imei1', '=', imei)
        .executeTakeFirstOrThrow()
    ).online;
  const statusOf = async (transactionId: string) =>
    (
      await suite.database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow()
    ).status;

  it('admits a device credential only with its own client id, and refuses the rest before any takeover', async () => {
    const { url, service } = embeddedBroker(suite.server);
    const victim = device();
    await victim.register();
    await victim.connect();
    await online(victim.imei, true);
    const victimClient = victim.mqttClient as MqttClient;
    let victimClosed = 0;
    victimClient.on('close', () => {
      victimClosed += 1;
    });
    const attacker = device();
    const { credential } = await attacker.register();
    const asAttacker = (clientId: string) =>
      connackCode(url, { clientId, username: attacker.imei, password: credential });

    // What the review measured: 20 connections in a row with the victim's client id. Each is refused
    // with CONNACK 2 (identifier rejected), and none takes over the victim's session.
    for (let i = 0; i < 20; i++) expect(await asAttacker(`lendlock-device-${victim.imei}`)).toBe(2);
    // Nor the service's, the load test's or any other client id; an empty one gets a generated id: refused.
    for (const clientId of [
      'lendlock-server',
      `lendlock-server-${randomBytes(6).toString('hex')}`,
      LOADTEST.username,
      'lendlock-mux-bench-0',
      `lendlock-device-${attacker.imei}0`,
      `x-lendlock-device-${attacker.imei}`,
      '',
    ]) {
      expect(await asAttacker(clientId)).toBe(2);
    }
    // A wrong credential is still "bad username or password", whatever the client id.
    expect(
      await connackCode(url, {
        clientId: `lendlock-device-${attacker.imei}`,
        username: attacker.imei,
        password: 'not-the-credential',
      }),
    ).toBe(4);
    // The service and load-test identities cannot take a device's client id either.
    expect(await connackCode(url, { clientId: `lendlock-device-${victim.imei}`, ...service })).toBe(2);
    expect(await connackCode(url, { clientId: `lendlock-device-${victim.imei}`, ...LOADTEST })).toBe(2);

    // The victim never lost its connection, and is still served.
    expect(victimClosed).toBe(0);
    expect(victimClient.connected).toBe(true);
    expect(suite.server.app.deviceChannel?.gateway.connected).toBe(true);
    const issued = await suite.server.app.ctx.commands.issue({
      imei: victim.imei,
      command: 'LOCK',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(async () => expect(await statusOf(issued.transactionId)).toBe('EXECUTED'), {
      timeout: 8000,
      interval: 50,
    });
    expect(victimClosed).toBe(0);
    expect(await isOnline(victim.imei)).toBe(true);
    // With its own client id the attacker's credential works as ever.
    expect(await asAttacker(`lendlock-device-${attacker.imei}`)).toBe(0);
  });

  it('marks a device offline when it disconnects cleanly without saying so', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const client = agent.mqttClient as MqttClient;
    // A clean DISCONNECT: the broker discards the will, and the agent never published `offline`.
    await client.endAsync(false);
    await online(agent.imei, false);
  });

  it('keeps a device online when a newer connection of it has taken over the older one', async () => {
    const { url } = embeddedBroker(suite.server);
    const agent = device();
    const { credential } = await agent.register();
    const first = await deviceConnection(url, agent.imei, credential);
    await first.publishAsync(topics.status(agent.imei), DEVICE_ONLINE, { qos: 1 });
    await online(agent.imei, true);
    const firstClosed = closed(first);
    // The same device again (its own client id): the broker closes the older connection.
    const second = await deviceConnection(url, agent.imei, credential);
    await firstClosed;
    await second.publishAsync(topics.status(agent.imei), DEVICE_ONLINE, { qos: 1 });
    await online(agent.imei, true);
    // Whatever the older connection's end says reaches the server before the newer `online`; nothing later.
    // Barrier: a later report on the newer connection applied (the server applies a device's messages in
    // the order they arrive).
    await second.publishAsync(
      topics.state(agent.imei),
      JSON.stringify({ state: INITIAL_DEVICE_STATE, appversion: '9.8.7' }),
      { qos: 1 },
    );
    await vi.waitFor(
      async () =>
        expect(
          (
            await suite.database.db
              .selectFrom('devices')
              .select('appversion')
              .where('imei1', '=', agent.imei)
              .executeTakeFirstOrThrow()
          ).appversion,
        ).toBe('9.8.7'),
      { timeout: 8000, interval: 50 },
    );
    expect(await isOnline(agent.imei)).toBe(true);
    expect(second.connected).toBe(true);
    // The last connection gone (cleanly, without a word): offline.
    await second.endAsync(false);
    await online(agent.imei, false);
  });

  it('closes a client that announces a 200 MB packet without buffering it', { timeout: 60_000 }, async () => {
    const { port } = embeddedBroker(suite.server);
    const agent = device();
    const { credential } = await agent.register();
    const socket = await rawDeviceConnection(port, agent.imei, credential);
    const word = Buffer.from(DEVICE_ONLINE);
    socket.write(Buffer.concat([publishHeader(topics.status(agent.imei), word.length), word]));
    await online(agent.imei, true);
    let hungUp = false;
    const closedByServer = new Promise<void>((resolve) =>
      socket.once('close', () => {
        hungUp = true;
        resolve();
      }),
    );

    const announced = 200 * MB;
    const chunk = Buffer.alloc(MB, 0x20);
    const before = process.memoryUsage().rss;
    let peak = before;
    let written = 0;
    socket.write(publishHeader(topics.ack(agent.imei), announced));
    // Offer the whole payload, 1 MB at a time as the socket drains, until the server hangs up.
    while (written < announced && !hungUp && !socket.destroyed) {
      const drained = socket.write(chunk);
      written += chunk.length;
      peak = Math.max(peak, process.memoryUsage().rss);
      // The write that meets the closed connection fails (EPIPE, ECONNRESET): that is the hang-up.
      if (!drained) await Promise.race([once(socket, 'drain').catch(() => {}), closedByServer]);
    }
    await closedByServer;
    peak = Math.max(peak, process.memoryUsage().rss);
    // Hung up long before the payload could arrive; what reached the server was never kept.
    expect(written).toBeLessThan(announced / 2);
    expect(peak - before).toBeLessThan(50 * MB);
    // Its connection gone, the device is offline.
    await online(agent.imei, false);
  });
});

describe.each(databaseKinds())('MQTT_MAX_PACKET_BYTES on %s', (kind) => {
  const suite = deviceSuite(kind, { mqttMaxPacketBytes: 2048 });

  it('admits packets up to the limit and closes the connection of a client that sends a larger one', async () => {
    const { url } = embeddedBroker(suite.server);
    const agent = simulatedDevice(suite.server);
    suite.devices.push(agent);
    const { credential } = await agent.register();
    const client = await deviceConnection(url, agent.imei, credential);
    // 1,900 bytes of payload: the packet stays under 2,048 bytes.
    const state = JSON.stringify({ state: INITIAL_DEVICE_STATE, appversion: '1.0' });
    await client.publishAsync(topics.state(agent.imei), state.padEnd(1900, ' '), { qos: 1 });
    await client.publishAsync(topics.status(agent.imei), DEVICE_ONLINE, { qos: 1 });
    await vi.waitFor(
      async () => {
        const row = await suite.database.db
          .selectFrom('devices')
          .select('online')
          .where('imei1', '=', agent.imei)
          .executeTakeFirstOrThrow();
        expect(row.online).toBe(true);
      },
      { timeout: 8000, interval: 50 },
    );
    expect(client.connected).toBe(true);
    const gone = closed(client);
    client.publish(topics.state(agent.imei), state.padEnd(2100, ' '), { qos: 0 });
    await gone;
    await vi.waitFor(
      async () => {
        const row = await suite.database.db
          .selectFrom('devices')
          .select('online')
          .where('imei1', '=', agent.imei)
          .executeTakeFirstOrThrow();
        expect(row.online).toBe(false);
      },
      { timeout: 8000, interval: 50 },
    );
  });
});

const combos = databaseKinds().flatMap((db) => channelKinds().map((channel) => [db, channel] as const));

describe.each(combos)(
  'acknowledgements never lost for their content on %s with the %s broker',
  (kind, channel) => {
    let database: TestDatabase;
    let server: DeviceServer;
    const devices: SimulatedDevice[] = [];

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      // A dropped acknowledgement would show as a resend within a second.
      server = await startDeviceServer(database, channel, { commandResendAfterMs: 1000 });
    });
    afterAll(async () => {
      await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
      await server?.close();
      await database?.close();
    });

    /** A connected agent whose acknowledgements the test writes itself: returns the commands it receives. */
    const manualAgent = async () => {
      const agent = simulatedDevice(server);
      devices.push(agent);
      await agent.register();
      await agent.connect();
      // Online on record, and what followed its `online` done: a command issued now is sent once (one
      // issued while the server applies `online` may be sent by both, which the agent would de-duplicate).
      await vi.waitFor(
        async () =>
          expect(
            (
              await database.db
                .selectFrom('devices')
                .select('online')
                .where('imei1', '=', agent.imei)
                .executeTakeFirstOrThrow()
            ).online,
          ).toBe(true),
        { timeout: 8000, interval: 25 },
      );
      await server.app.ctx.commands.drain();
      const client = agent.mqttClient as MqttClient;
      client.removeAllListeners('message');
      const received: CommandMessage[] = [];
      // Its commands only: on a shared broker another test's server asks every device to announce itself
      // (lendlock/server/status), and this agent hears that too.
      client.on('message', (topic, payload) => {
        if (topic === topics.cmd(agent.imei)) received.push(JSON.parse(payload.toString('utf8')));
      });
      return { agent, client, received };
    };
    const command = async (transactionId: string) =>
      database.db
        .selectFrom('commands')
        .select(['status', 'result'])
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow();
    const acknowledge = async (ack: (id: string) => Record<string, unknown>) => {
      const { agent, client, received } = await manualAgent();
      const issued = await server.app.ctx.commands.issue({
        imei: agent.imei,
        command: 'LOCK',
        iface: 'S',
        actor: null,
      });
      await vi.waitFor(() => expect(received).toHaveLength(1), { timeout: 8000, interval: 25 });
      await client.publishAsync(topics.ack(agent.imei), JSON.stringify(ack(issued.transactionId)), {
        qos: 1,
      });
      await vi.waitFor(async () => expect((await command(issued.transactionId)).status).toBe('EXECUTED'), {
        timeout: 8000,
        interval: 50,
      });
      // Applied, so never sent again. Barrier: a dispatch of everything the device still has pending, even
      // what was sent a moment ago (the resend the sweeper would do after commandResendAfterMs), sends nothing.
      await server.app.ctx.commands.drain();
      expect(await server.app.ctx.commands.dispatch(agent.imei, true)).toBe(0);
      expect(received.map((m) => m.id)).toEqual([issued.transactionId]);
      return (await command(issued.transactionId)).result;
    };
    const locked = { ...INITIAL_DEVICE_STATE, locked: true };

    it('applies an acknowledgement with a 5,000-character result, keeping its first 500 characters', async () => {
      const long = `${'a'.repeat(499)}b${'c'.repeat(4500)}`;
      const result = await acknowledge((id) => ({ id, status: 'EXECUTED', result: long, state: locked }));
      expect(result).toBe(long.slice(0, 500));
    });

    it('applies an acknowledgement with NUL characters in its result and id, without them', async () => {
      const result = await acknowledge((id) => ({
        id: `${id.slice(0, 8)}\u0000${id.slice(8)}`,
        status: 'EXECUTED',
        result: 'done\u0000 at\u0000 once',
        state: locked,
      }));
      expect(result).toBe('done at once');
    });

    it('applies a state report with NUL characters in its app version, and cuts a long one', async () => {
      const { agent, client } = await manualAgent();
      const appversion = async () =>
        (
          await database.db
            .selectFrom('devices')
            .select('appversion')
            .where('imei1', '=', agent.imei)
            .executeTakeFirstOrThrow()
        ).appversion;
      const report = (version: string) =>
        client.publishAsync(
          topics.state(agent.imei),
          JSON.stringify({ state: { ...INITIAL_DEVICE_STATE, alarm: true }, appversion: version }),
          { qos: 1 },
        );
      await report('4.0\u0000.1');
      await vi.waitFor(async () => expect(await appversion()).toBe('4.0.1'), { timeout: 8000, interval: 50 });
      const reported = await database.db
        .selectFrom('devices')
        .select('reported_state')
        .where('imei1', '=', agent.imei)
        .executeTakeFirstOrThrow();
      expect(reported.reported_state?.alarm).toBe(true);
      await report(`5.${'9'.repeat(70)}`);
      await vi.waitFor(async () => expect(await appversion()).toBe(`5.${'9'.repeat(48)}`), {
        timeout: 8000,
        interval: 50,
      });
    });
  },
);
