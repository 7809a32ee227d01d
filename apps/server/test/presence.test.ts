/**
 * A broker restart loses no phone. A broker stopped the ordinary way (SIGTERM) publishes every
 * device's `offline` will; the phones come back before the server has subscribed again, and their
 * `online` reaches nobody. The server's `online` on the server status topic makes every agent say it
 * again (docs/device-protocol.md §2, "When the server comes back"), and any message of a device proves it
 * online. Here: a private Mosquitto with per-device credentials stopped gracefully and abruptly, with the
 * server held back until the phones are in, and the embedded broker replaced under a running server.
 */
import { randomBytes } from 'node:crypto';
import {
  type CommandStatus,
  DEVICE_OFFLINE,
  INITIAL_DEVICE_STATE,
  SERVER_STATUS_TOPIC,
  topics,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import type { MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { sha256Hex } from '../src/lib/secrets';
import { type EmbeddedBroker, startEmbeddedBroker } from '../src/modules/channel/broker';
import { deviceCredentialHash } from '../src/modules/devices/repository';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, simulatedDevice, startDeviceServer } from './devices';
import {
  hasDynsec,
  type PrivateMosquitto,
  startPrivateMosquitto,
  startTcpGate,
  type TcpGate,
} from './private-mosquitto';

const PHONES = 3;

/** What both suites share: the server's rows, and phones that are online. */
function presenceHelpers(database: () => TestDatabase) {
  const onlineOf = async (imeis: readonly string[]) =>
    (
      await database()
        .db.selectFrom('devices')
        .select(['imei1', 'online'])
        .where('imei1', 'in', [...imeis])
        .orderBy('imei1')
        .execute()
    ).map((row) => row.online);
  const allOnline = (imeis: readonly string[], value: boolean) =>
    vi.waitFor(async () => expect(await onlineOf(imeis)).toEqual(imeis.map(() => value)), {
      timeout: 10_000,
      interval: 50,
    });
  const statusOf = async (transactionId: string): Promise<CommandStatus> =>
    (
      await database()
        .db.selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow()
    ).status;
  /** Resolves when the agent has connected again and announced itself (after a broker restart). */
  const announcedAgain = (device: SimulatedDevice) =>
    new Promise<void>((resolve) => device.once('online', () => resolve()));
  const appversionOf = async (imei1: string) =>
    (
      await database()
        .db.selectFrom('devices')
        .select('appversion')
        .where('imei1', '=', imei1)
        .executeTakeFirstOrThrow()
    ).appversion;
  /**
   * A phone may subscribe to the server status topic but not publish on it: `speaker` tries; `listener`
   * hears nothing. The embedded broker closes the connection of a device that publishes where it may not
   * (`closes`); Mosquitto drops the message and keeps the connection.
   */
  const serverStatusIsTheServers = async (
    speaker: SimulatedDevice,
    listener: SimulatedDevice,
    closes: boolean,
  ) => {
    const listening = listener.mqttClient as MqttClient;
    // The agent subscribed when it connected; asked again, the broker grants it rather than answer 0x80.
    await listening.unsubscribeAsync(SERVER_STATUS_TOPIC);
    const [granted] = await listening.subscribeAsync(SERVER_STATUS_TOPIC, { qos: 1 });
    expect(granted?.qos).toBe(1);
    const heard: string[] = [];
    listening.on('message', (topic, payload) => {
      if (topic === SERVER_STATUS_TOPIC) heard.push(payload.toString('utf8'));
    });
    const speaking = speaker.mqttClient as MqttClient;
    let closed = false;
    speaking.once('close', () => {
      closed = true;
    });
    const fake = JSON.stringify({ status: 'online', announceWithinMs: 0 });
    await speaking.publishAsync(SERVER_STATUS_TOPIC, fake, { qos: 0 });
    if (closes) {
      await vi.waitFor(() => expect(closed).toBe(true));
    } else {
      // Something the server hears from the same phone after it: once applied, the broker handled both.
      const marker = `m${randomBytes(3).toString('hex')}`;
      const report = JSON.stringify({ state: speaker.state, appversion: marker });
      await speaking.publishAsync(topics.state(speaker.imei), report, { qos: 1 });
      await vi.waitFor(async () => expect(await appversionOf(speaker.imei)).toBe(marker));
      expect(closed).toBe(false);
    }
    expect(heard).toEqual([]);
  };
  return { allOnline, statusOf, announcedAgain, serverStatusIsTheServers };
}

describe.runIf(hasDynsec).each(databaseKinds())(
  'phones across restarts of Mosquitto with per-device credentials on %s',
  (kind) => {
    let database: TestDatabase;
    let broker: PrivateMosquitto;
    let gate: TcpGate;
    let server: DeviceServer;
    const devices: SimulatedDevice[] = [];
    const { allOnline, statusOf, announcedAgain, serverStatusIsTheServers } = presenceHelpers(() => database);

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      broker = await startPrivateMosquitto();
      // The server reaches the broker through a gate the test holds shut while the phones come back.
      gate = await startTcpGate(broker.port);
      const url = new URL(gate.url);
      url.username = broker.server.username;
      url.password = broker.server.password;
      server = await startDeviceServer(database, 'embedded', {
        mqttUrl: url.toString(),
        mqttSharedGroup: `p${randomBytes(4).toString('hex')}`,
        mqttDynsec: true,
        deviceMqttUrl: broker.url,
      });
      for (let i = 0; i < PHONES; i++) {
        const device = simulatedDevice(server);
        devices.push(device);
        await device.register();
        await device.connect();
      }
    }, 60_000);
    afterAll(async () => {
      await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
      await server?.close();
      await gate?.close();
      await broker?.stop();
      await database?.close();
    });

    it.each(['SIGTERM', 'SIGKILL'] as const)(
      'a LOCK issued while the broker restarts (%s) reaches every phone that came back before the server',
      { timeout: 60_000 },
      async (signal) => {
        const imeis = devices.map((d) => d.imei);
        await allOnline(imeis, true);
        const back = devices.map(announcedAgain);
        await broker.restart(signal, () => {
          // The broker is down (after a SIGTERM the server heard every phone's `offline` will): the
          // server's next connection waits at the gate.
          gate.hold();
        });
        // Every phone reconnects on its own, subscribes and says `online` to a server that is not there.
        await Promise.all(back);
        expect(server.app.deviceChannel?.gateway.connected).toBe(false);
        const locks = [];
        for (const device of devices) {
          locks.push(
            await server.app.ctx.commands.issue({
              imei: device.imei,
              command: 'LOCK',
              iface: 'S',
              actor: null,
            }),
          );
        }
        for (const lock of locks) expect(await statusOf(lock.transactionId)).toBe('QUEUED');
        gate.open();
        for (const lock of locks) {
          await vi.waitFor(async () => expect(await statusOf(lock.transactionId)).toBe('EXECUTED'), {
            timeout: 20_000,
            interval: 100,
          });
        }
        await allOnline(imeis, true);
        for (const device of devices) {
          expect(device.state.locked).toBe(true);
          // The next restart starts from unlocked phones.
          await server.app.ctx.commands.issue({
            imei: device.imei,
            command: 'UNLOCK',
            iface: 'S',
            actor: null,
          });
        }
        await vi.waitFor(() => expect(devices.map((d) => d.state.locked)).toEqual(devices.map(() => false)), {
          timeout: 10_000,
        });
      },
    );

    it('lets a phone hear the server status topic and never speak on it', async () => {
      const [speaker, listener] = devices as [SimulatedDevice, SimulatedDevice];
      await serverStatusIsTheServers(speaker, listener, false);
    });
  },
);

describe.each(databaseKinds())('phones across a restart of the embedded broker on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let replacement: EmbeddedBroker | undefined;
  const devices: SimulatedDevice[] = [];
  const { allOnline, statusOf, serverStatusIsTheServers } = presenceHelpers(() => database);

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded');
  });
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
    await server?.close();
    await replacement?.close();
    await database?.close();
  });

  it('a LOCK issued while the broker restarts reaches every phone that came back before the server', {
    timeout: 60_000,
  }, async () => {
    for (let i = 0; i < PHONES; i++) {
      const device = simulatedDevice(server);
      devices.push(device);
      await device.register();
      await device.connect();
    }
    const imeis = devices.map((d) => d.imei);
    await allOnline(imeis, true);
    const broker = server.app.deviceChannel?.broker as EmbeddedBroker;
    // As a stopping broker does: every phone's connection ends, and the server hears its `offline`.
    for (const device of devices) await device.dropOffline();
    await allOnline(imeis, false);
    // The broker goes, and another takes its port: the server's gateway tries again a second later.
    await broker.close();
    replacement = await startEmbeddedBroker({
      host: '0.0.0.0',
      port: broker.port,
      service: broker.service,
      authenticateDevice: async (imei, credential) =>
        (await deviceCredentialHash(database.db, imei)) === sha256Hex(credential),
      maxPacketBytes: 65_536,
    });
    // The phones are back first, and say `online` to nobody.
    for (const device of devices) await device.connect();
    expect(server.app.deviceChannel?.gateway.connected).toBe(false);
    const locks = [];
    for (const device of devices) {
      locks.push(
        await server.app.ctx.commands.issue({ imei: device.imei, command: 'LOCK', iface: 'S', actor: null }),
      );
    }
    for (const lock of locks) expect(await statusOf(lock.transactionId)).toBe('QUEUED');
    for (const lock of locks) {
      await vi.waitFor(async () => expect(await statusOf(lock.transactionId)).toBe('EXECUTED'), {
        timeout: 15_000,
        interval: 100,
      });
    }
    await allOnline(imeis, true);
    expect(devices.map((d) => d.state)).toEqual(
      devices.map(() => ({ ...INITIAL_DEVICE_STATE, locked: true })),
    );
  });

  it('marks a phone heard offline online again by its next message, and sends what waited', async () => {
    const [device] = devices as [SimulatedDevice];
    const client = device.mqttClient as MqttClient;
    // An `offline` the server hears while the phone is connected (a late will of an older connection).
    await client.publishAsync(topics.status(device.imei), DEVICE_OFFLINE, { qos: 1 });
    await allOnline([device.imei], false);
    const alarm = await server.app.ctx.commands.issue({
      imei: device.imei,
      command: 'SETALARM',
      iface: 'S',
      actor: null,
    });
    expect(await statusOf(alarm.transactionId)).toBe('QUEUED');
    // The phone says nothing of its presence, only what it enforces: that proves it is there.
    await client.publishAsync(topics.state(device.imei), JSON.stringify({ state: device.state }), { qos: 1 });
    await vi.waitFor(async () => expect(await statusOf(alarm.transactionId)).toBe('EXECUTED'), {
      timeout: 10_000,
      interval: 50,
    });
    await allOnline([device.imei], true);
    expect(device.state.alarm).toBe(true);
  });

  it('lets a phone hear the server status topic and never speak on it', async () => {
    const [speaker, listener] = devices.slice(1) as [SimulatedDevice, SimulatedDevice];
    await serverStatusIsTheServers(speaker, listener, true);
  });
});
