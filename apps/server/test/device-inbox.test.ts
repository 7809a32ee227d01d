/**
 * The device inbox applies acknowledgements, states and presence one way. A flush that fails
 * for one bad message is applied again one message at a time, each as a flush of its own (the same
 * set-based statements, the same device lock order), so the others converge and only the bad one fails.
 */
import { INITIAL_DEVICE_STATE } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import * as commandsRepository from '../src/modules/commands/repository';
import * as devicesRepository from '../src/modules/devices/repository';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';

describe.each(databaseKinds())('the device inbox on %s', (kind) => {
  const suite = deviceSuite(kind);

  const commandRow = (transactionId: string) =>
    suite.database.db
      .selectFrom('commands')
      .select(['status', 'result', 'completed_at'])
      .where('transaction_id', '=', transactionId)
      .executeTakeFirstOrThrow();
  const deviceRow = (imei1: string) =>
    suite.database.db
      .selectFrom('devices')
      .select(['online', 'reported_state', 'appversion'])
      .where('imei1', '=', imei1)
      .executeTakeFirstOrThrow();

  it('has one way to apply a device message: no single-row functions beside the set-based ones', () => {
    expect(Object.keys(commandsRepository)).not.toContain('applyAck');
    expect(Object.keys(devicesRepository)).not.toContain('setOnline');
    expect(Object.keys(devicesRepository)).not.toContain('setReportedState');
  });

  it('applies every other message of a flush that one bad message makes fail, and refuses only that one', async () => {
    const { commands } = suite.server.app.ctx;
    // Registered, never connected: their commands wait QUEUED, and what they "say" is handed to the inbox.
    const [a, b, c] = [
      simulatedDevice(suite.server),
      simulatedDevice(suite.server),
      simulatedDevice(suite.server),
    ];
    for (const device of [a, b, c]) await device.register();
    const lockA = await commands.issue({ imei: a.imei, command: 'LOCK', iface: 'S', actor: null });
    const alarmB = await commands.issue({ imei: b.imei, command: 'SETALARM', iface: 'S', actor: null });
    const lockedState = { ...INITIAL_DEVICE_STATE, locked: true };

    // Gathered into one flush: the NUL in b's result (the schema removes it; this bypasses the schema)
    // makes PostgreSQL refuse the whole statement.
    const settled = await Promise.allSettled([
      commands.handleAck(a.imei, { id: lockA.transactionId, status: 'EXECUTED', state: lockedState }),
      commands.handleAck(b.imei, { id: alarmB.transactionId, status: 'FAILED', result: 'bad\u0000byte' }),
      commands.handleState(c.imei, { state: lockedState, appversion: '9.9.9' }),
      commands.handleStatus(c.imei, true),
    ]);
    expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);

    expect(await commandRow(lockA.transactionId)).toMatchObject({ status: 'EXECUTED', result: null });
    // The same rules as a flush of many: a's acknowledgement proves it online.
    expect(await deviceRow(a.imei)).toMatchObject({ online: true, reported_state: lockedState });
    // The bad acknowledgement changed nothing: b stays offline.
    expect(await commandRow(alarmB.transactionId)).toMatchObject({ status: 'QUEUED', completed_at: null });
    expect(await deviceRow(b.imei)).toMatchObject({ online: false, reported_state: null });
    // c said it is online and reported a state it should not have: the reconcile unlocks it.
    expect(await deviceRow(c.imei)).toMatchObject({
      online: true,
      reported_state: lockedState,
      appversion: '9.9.9',
    });
    await vi.waitFor(
      async () => {
        const fixes = await suite.database.db
          .selectFrom('commands')
          .select(['command', 'interface'])
          .where('imei1', '=', c.imei)
          .execute();
        expect(fixes).toEqual([{ command: 'UNLOCK', interface: 'S' }]);
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it('reconciles the state an acknowledgement reports: an older command resent after a newer one undid it', async () => {
    const { commands } = suite.server.app.ctx;
    const device = simulatedDevice(suite.server);
    suite.devices.push(device);
    await device.register();
    await device.connect();
    const settled = (transactionId: string) =>
      vi.waitFor(async () => expect((await commandRow(transactionId)).status).toBe('EXECUTED'), {
        timeout: 5000,
        interval: 50,
      });
    const unlock = await commands.issue({ imei: device.imei, command: 'UNLOCK', iface: 'S', actor: null });
    await settled(unlock.transactionId);
    const lock = await commands.issue({ imei: device.imei, command: 'LOCK', iface: 'S', actor: null });
    await settled(lock.transactionId);
    expect(device.state.locked).toBe(true);

    // The phone unlocked by the older UNLOCK once more (its resend after a server's SIGKILL reached the
    // phone after the LOCK), and says so in the acknowledgement of that resend; nothing else is pending.
    device.state = { ...device.state, locked: false };
    await commands.handleAck(device.imei, {
      id: unlock.transactionId,
      status: 'EXECUTED',
      result: 'already executed',
      state: device.state,
    });

    // The record wants it locked: the reconcile sends a LOCK, and the phone is locked again.
    await vi.waitFor(
      async () => {
        expect(device.state.locked).toBe(true);
        expect((await deviceRow(device.imei)).reported_state).toMatchObject({ locked: true });
      },
      { timeout: 5000, interval: 50 },
    );
    const locks = await suite.database.db
      .selectFrom('commands')
      .select(['command', 'status'])
      .where('imei1', '=', device.imei)
      .where('command', '=', 'LOCK')
      .orderBy('id')
      .execute();
    expect(locks).toEqual([
      { command: 'LOCK', status: 'EXECUTED' },
      { command: 'LOCK', status: 'EXECUTED' },
    ]);
  });
});
