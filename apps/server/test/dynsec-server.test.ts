/**
 * The server against an external Mosquitto under dynamic security: each device's broker client is
 * provisioned at registration, replaced at a proven re-registration and removed at de-enrollment, so
 * the broker itself refuses an old credential and confines a device to its own topics. And a server never
 * starts against a broker that lets anyone in, unless told to (MQTT_ALLOW_ANONYMOUS=on, tests only).
 */
import { deviceClientId, topics } from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, simulatedDevice, startDeviceServer } from './devices';
import { buildTestApp } from './factories';
import {
  hasDynsec,
  type PrivateMosquitto,
  startAnonymousMosquitto,
  startPrivateMosquitto,
} from './private-mosquitto';

describe.runIf(hasDynsec).each(databaseKinds())(
  'devices on %s with Mosquitto under dynamic security',
  (kind) => {
    let database: TestDatabase;
    let broker: PrivateMosquitto;
    let server: DeviceServer;
    const devices: SimulatedDevice[] = [];

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      broker = await startPrivateMosquitto();
      const url = new URL(broker.url);
      url.username = broker.server.username;
      url.password = broker.server.password;
      server = await startDeviceServer(database, 'embedded', {
        mqttUrl: url.toString(),
        mqttSharedGroup: 'dynsec',
        mqttDynsec: true,
      });
    });
    afterAll(async () => {
      await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
      await server?.close();
      await broker?.stop();
      await database?.close();
    });
    const agent = () => {
      const created = simulatedDevice(server);
      devices.push(created);
      return created;
    };
    const connectAs = (imei: string, credential: string, clientId = deviceClientId(imei)) =>
      new Promise<mqtt.MqttClient>((resolve, reject) => {
        const client = mqtt.connect(broker.url, {
          clientId,
          username: imei,
          password: credential,
          reconnectPeriod: 0,
          connectTimeout: 3000,
        });
        client.once('connect', () => resolve(client));
        client.once('error', (error) => {
          client.end(true);
          reject(error);
        });
      });

    it('reports per-device authentication on /readyz', async () => {
      const ready = await server.app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.json()).toMatchObject({
        broker: { kind: 'external', connected: true, deviceAuth: 'dynsec' },
      });
    });

    it('a registered device works; its old credential and another device are refused by the broker itself', async () => {
      const phone = agent();
      const first = await phone.register();
      await phone.connect();
      const lock = await server.app.ctx.commands.issue({
        imei: phone.imei,
        command: 'LOCK',
        iface: 'S',
        actor: null,
      });
      await vi.waitFor(() => expect(phone.state.locked).toBe(true), { timeout: 8000 });
      expect(phone.received.map((m) => m.id)).toEqual([lock.transactionId]);

      // Another device cannot read this one's commands or write its acknowledgements.
      const other = agent();
      const otherCredentials = await other.register();
      const intruder = await connectAs(other.imei, otherCredentials.credential);
      const granted = await intruder
        .subscribeAsync(topics.cmd(phone.imei), { qos: 1 })
        .catch((error: { packet?: { granted?: number[] } }) => error.packet?.granted ?? [128]);
      expect(Array.isArray(granted) ? granted.map((g) => (typeof g === 'number' ? g : g.qos)) : []).toEqual([
        128,
      ]);
      intruder.end(true);
      // Nor can it connect as this device, with its own credential.
      await expect(connectAs(phone.imei, otherCredentials.credential)).rejects.toThrow();

      // A proven re-registration replaces the broker client: the old credential is refused from now on.
      await phone.register();
      await expect(connectAs(phone.imei, first.credential)).rejects.toThrow();
      await phone.connect();
      const unlock = await server.app.ctx.commands.issue({
        imei: phone.imei,
        command: 'UNLOCK',
        iface: 'S',
        actor: null,
      });
      await vi.waitFor(() => expect(phone.received.map((m) => m.id)).toContain(unlock.transactionId), {
        timeout: 8000,
      });
      expect(phone.state.locked).toBe(false);

      // De-enrolled: the broker forgets the device.
      const credentials = phone.credentials?.credential as string;
      await phone.disconnect();
      await server.app.ctx.commands.issue({
        imei: phone.imei,
        command: 'FORMATTEDDEVICE',
        iface: 'S',
        actor: null,
      });
      await vi.waitFor(() => expect(connectAs(phone.imei, credentials)).rejects.toThrow(), { timeout: 8000 });
    });

    it('a registration is refused with 503, changing nothing, when the broker cannot be provisioned', async () => {
      const { ctx } = server.app;
      const provision = ctx.channel.provisionDevice;
      // As the dynamic-security client answers while the broker is down (dynsec.test.ts proves that part).
      ctx.channel.provisionDevice = async () => {
        throw new Error('dynsec: the broker did not answer');
      };
      try {
        const phone = agent();
        await expect(phone.register()).rejects.toMatchObject({ status: 503 });
        const row = await database.db
          .selectFrom('devices')
          .select('imei1')
          .where('imei1', '=', phone.imei)
          .executeTakeFirst();
        expect(row).toBeUndefined();
        ctx.channel.provisionDevice = provision;
        await phone.register();
        await phone.connect();
      } finally {
        ctx.channel.provisionDevice = provision;
      }
    });
  },
);

describe.runIf(hasDynsec)('an external broker that admits anonymous clients', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase('pglite');
  });
  afterAll(() => database?.close());

  it('is refused at start unless MQTT_ALLOW_ANONYMOUS=on', async () => {
    const open = await startAnonymousMosquitto();
    try {
      await expect(buildTestApp(database, { mqttUrl: open.url, mqttSharedGroup: 'anon' })).rejects.toThrow(
        /admits anonymous clients/,
      );
      const allowed = await buildTestApp(database, {
        mqttUrl: open.url,
        mqttSharedGroup: 'anon',
        mqttAllowAnonymous: true,
      });
      const ready = await allowed.inject({ method: 'GET', url: '/readyz' });
      expect(ready.json().broker).toMatchObject({ kind: 'external', deviceAuth: 'anonymous' });
      await allowed.close();
    } finally {
      await open.stop();
    }
  });
});
