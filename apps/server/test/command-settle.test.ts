/**
 * A de-enrolled device keeps nothing pending, and device action ALL is a batch without a
 * file (interface B). commands.priority says which work goes first (single 2, batch and ALL 0).
 */
import { DEVICE_ACTION_SUCCESS } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { DEENROLLED_RESULT } from '../src/modules/devices/repository';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';
import { buildUser, loginAs } from './factories';

describe.each(databaseKinds())('what de-enrollment and ALL leave behind on %s', (kind) => {
  const suite = deviceSuite(kind);
  const { devices } = suite;
  const call = (token: string, url: string, payload: object) =>
    suite.server.app.inject({ method: 'POST', url: `/api/${url}`, headers: { 'x-api-key': token }, payload });
  const commandsOf = (imei1: string) =>
    suite.database.db
      .selectFrom('commands')
      .select([
        'transaction_id',
        'command',
        'status',
        'result',
        'completed_at',
        'interface',
        'priority',
        'batch_id',
      ])
      .where('imei1', '=', imei1)
      .orderBy('id')
      .execute();

  it('Formatted Device cancels the open commands of the device, with the reason, in the same step', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register(); // registered, never connected: its commands wait
    const issue = async (action: string) => {
      const response = await call(suite.admin.token, 'locknotification.php', {
        imei: device.imei,
        action,
        user: suite.admin.email,
      });
      expect([response.statusCode, response.json().message]).toEqual([200, expect.any(String)]);
      return response.json().transactionId as string;
    };
    const [queued, sent, delivered] = [
      await issue('lock'),
      await issue('blockapp'),
      await issue('activatealarm'),
    ];
    // As if the broker had taken one and the device had received another before the phone was formatted.
    await suite.database.db
      .updateTable('commands')
      .set({ status: 'SENT' })
      .where('transaction_id', '=', sent)
      .execute();
    await suite.database.db
      .updateTable('commands')
      .set({ status: 'DELIVERED' })
      .where('transaction_id', '=', delivered)
      .execute();

    const format = await call(suite.admin.token, 'formattedDevice.php', {
      imei: device.imei,
      user: suite.admin.email,
    });
    expect(format.statusCode).toBe(200);
    const rows = await commandsOf(device.imei);
    expect(rows.map((r) => [r.transaction_id, r.command, r.status, r.result])).toEqual([
      [queued, 'LOCK', 'CANCELLED', DEENROLLED_RESULT],
      [sent, 'BLOCKAPP', 'CANCELLED', DEENROLLED_RESULT],
      [delivered, 'SETALARM', 'CANCELLED', DEENROLLED_RESULT],
      [format.json().transactionId, 'FORMATTEDDEVICE', 'EXECUTED', 'de-enrolled by the server'],
    ]);
    expect(rows.every((r) => r.completed_at !== null)).toBe(true);
    const pending = await call(suite.admin.token, 'v2/pendingCommands', { imei: device.imei });
    expect(pending.json().items).toEqual([]);
    const row = await suite.database.db
      .selectFrom('devices')
      .select('claimstatus')
      .where('imei1', '=', device.imei)
      .executeTakeFirstOrThrow();
    expect(row.claimstatus).toBe('DEENROLLED');
  });

  it('device action ALL is recorded as a batch without a file, interface B, at batch priority', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register();
    await device.connect();
    const boss = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { userlevel: 'SUPERADMIN' }),
    );
    const all = await call(boss.token, 'adminlocknotification.php', {
      imei: 'ALL',
      action: 'REBOOT',
      user: boss.email,
    });
    expect(all.json()).toMatchObject({ status: 'success', message: DEVICE_ACTION_SUCCESS });
    const { batchId, total } = all.json();
    // Followed from the first moment, before or while the workers record its commands: every device counts.
    const first = (await call(boss.token, 'v2/batchStatus', { batchId })).json();
    expect(first.total).toBe(total);
    const batch = await suite.database.db
      .selectFrom('batches')
      .select(['interface', 'file_name', 'stored_file', 'feature', 'total', 'command'])
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();
    expect(batch).toEqual({
      interface: 'B',
      file_name: null,
      stored_file: null,
      feature: 'deviceaction',
      total,
      command: 'REBOOT',
    });
    await vi.waitFor(() => expect(device.received.map((m) => m.command)).toContain('REBOOT'), {
      timeout: 10_000,
    });
    const single = await call(boss.token, 'adminlocknotification.php', {
      imei: device.imei,
      action: 'UPDATE',
      user: boss.email,
    });
    expect(single.statusCode).toBe(200);
    const rows = await commandsOf(device.imei);
    expect(
      rows.map((r) => [r.command, r.interface, r.priority, r.batch_id === null ? null : Number(r.batch_id)]),
    ).toEqual([
      ['REBOOT', 'B', 0, batchId],
      ['UPDATE', 'S', 2, null],
    ]);
  });
});
