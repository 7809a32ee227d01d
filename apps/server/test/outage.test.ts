/**
 * Faults of the infrastructure: the MQTT broker down for 60 s (commands stay pending and are delivered
 * once it is back, nothing lost), and a device offline for a long time getting one final desired state.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { connect } from 'node:net';
import type { CommandStatus } from '@lendlock/contract';
import { freePort } from '@lendlock/testkit';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, simulatedDevice, startDeviceServer } from './devices';

const OUTAGE_MS = Number(process.env.BROKER_OUTAGE_SECONDS ?? 60) * 1000;

/** A private Mosquitto (Debian's binary) this test may stop and start at will. */
async function startMosquitto(port: number): Promise<ChildProcess> {
  const child = spawn('mosquitto', ['-p', String(port)], { stdio: 'ignore' });
  await vi.waitFor(
    () =>
      new Promise<void>((ok, fail) => {
        const probe = connect(port, '127.0.0.1');
        probe.once('connect', () => {
          probe.destroy();
          ok();
        });
        probe.once('error', fail);
      }),
    { timeout: 10_000, interval: 100 },
  );
  return child;
}

const hasMosquitto = spawnSync('mosquitto', ['-h']).error === undefined;

describe.runIf(hasMosquitto)('the broker down', () => {
  let database: TestDatabase;
  let server: DeviceServer;
  let broker: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    broker = await startMosquitto(port);
    database = await openTestDatabase('pglite');
    server = await startDeviceServer(database, 'mosquitto', {
      mqttUrl: `mqtt://127.0.0.1:${port}`,
      commandResendAfterMs: 2000,
    });
  });
  afterAll(async () => {
    await server?.close();
    broker?.kill('SIGKILL');
    await database?.close();
  });

  const statusOf = async (transactionId: string): Promise<CommandStatus> =>
    (
      await database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow()
    ).status;

  it(`keeps commands pending for ${OUTAGE_MS / 1000} s without a broker and delivers them when it is back`, {
    timeout: OUTAGE_MS + 90_000,
  }, async () => {
    const devices = [simulatedDevice(server), simulatedDevice(server), simulatedDevice(server)];
    for (const device of devices) {
      await device.register();
      await device.connect();
    }
    await vi.waitFor(async () => {
      const rows = await database.db
        .selectFrom('devices')
        .select('online')
        .where(
          'imei1',
          'in',
          devices.map((d) => d.imei),
        )
        .execute();
      expect(rows.every((r) => r.online)).toBe(true);
    });
    broker.kill('SIGKILL');
    await new Promise((r) => setTimeout(r, 500));
    const sent = [];
    for (const device of devices) {
      sent.push(
        await server.app.ctx.commands.issue({ imei: device.imei, command: 'LOCK', iface: 'S', actor: null }),
      );
      sent.push(
        await server.app.ctx.commands.issue({
          imei: device.imei,
          command: 'NOTIFY',
          options: { message: 'Pay', caseType: 'Due' },
          iface: 'S',
          actor: null,
        }),
      );
    }
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    for (const command of sent) expect(['QUEUED', 'SENT']).toContain(await statusOf(command.transactionId));
    broker = await startMosquitto(port);
    for (const command of sent) {
      await vi.waitFor(async () => expect(await statusOf(command.transactionId)).toBe('EXECUTED'), {
        timeout: 60_000,
        interval: 200,
      });
    }
    for (const device of devices) {
      expect(device.state.locked).toBe(true);
      // Sent again after the outage, perhaps twice; executed once (the device ignores ids it has done).
      const notify = device.received.find((m) => m.command === 'NOTIFY');
      expect(notify && device.executions.get(notify.id)).toBe(1);
      await device.disconnect();
    }
  });
});

describe('a device offline for a long time', () => {
  let database: TestDatabase;
  let server: DeviceServer;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    server = await startDeviceServer(database, 'embedded');
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('gets one final desired state, not every intermediate command', async () => {
    const device = simulatedDevice(server);
    const credentials = await device.register();
    const { commands } = server.app.ctx;
    for (const command of [
      'LOCK',
      'UNLOCK',
      'LOCK',
      'BLOCKAPP',
      'UNLOCK',
      'LOCK',
      'UNBLOCKAPP',
      'SETALARM',
    ] as const) {
      await commands.issue({ imei: device.imei, command, iface: 'S', actor: null });
    }
    await device.connect(credentials);
    await vi.waitFor(() => expect(device.received.length).toBe(3), { timeout: 8000 });
    // Barrier: a later command (a notification, which changes no state) reaches the device, so anything
    // sent before it has arrived too.
    const later = await commands.issue({
      imei: device.imei,
      command: 'NOTIFY',
      options: { message: 'Pay', caseType: 'Due' },
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(() => expect(device.received.at(-1)?.id).toBe(later.transactionId), { timeout: 8000 });
    expect(
      device.received
        .slice(0, -1)
        .map((m) => m.command)
        .sort(),
    ).toEqual(['LOCK', 'SETALARM', 'UNBLOCKAPP']);
    expect(device.state).toMatchObject({ locked: true, appsBlocked: false, alarm: true });
    await device.disconnect();
  });
});
