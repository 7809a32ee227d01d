/**
 * Every webhook event is written by the part of the system where it happens, in the same
 * transaction, and reaches a real receiver signed: a registration, a re-registration waiting for approval,
 * a command executed, failed, cancelled and expired, a release, a de-enrollment and a finished batch.
 */
import { describe, expect, it, vi } from 'vitest';
import { DEENROLLED_RESULT } from '../src/modules/devices/repository';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';
import { Receiver } from './webhook-receiver';

describe.each(databaseKinds())('webhook events on %s', (kind) => {
  const suite = deviceSuite(kind, { webhookAllowPrivate: true });
  const { devices } = suite;
  const call = (url: string, payload?: object) =>
    suite.server.app.inject({
      method: payload ? 'POST' : 'GET',
      url: `/api/${url}`,
      headers: { 'x-api-key': suite.admin.token },
      ...(payload ? { payload } : {}),
    });
  let receiver: Receiver;

  /** The events written about a device, in order. */
  const eventsOf = async (imei1: string) =>
    (
      await suite.database.db
        .selectFrom('webhook_deliveries')
        .select(['event', 'payload'])
        .orderBy('id')
        .execute()
    )
      .map((row) => ({ event: row.event, data: (row.payload as { data: Record<string, unknown> }).data }))
      .filter((e) => e.data.imei1 === imei1);

  it('registers an endpoint for every event', async () => {
    receiver = new Receiver();
    await receiver.start();
    const response = await call('v2/webhooks', {
      url: receiver.url,
      events: [
        'command.executed',
        'command.failed',
        'command.expired',
        'command.cancelled',
        'batch.completed',
        'device.registered',
        'device.reregistration_requested',
        'device.deenrolled',
        'device.released',
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    receiver.secret = response.json().secret;
  });

  it('a registration and an executed lock, then a release: each event once, signed, at the receiver', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register();
    await device.connect();
    const lock = await call('locknotification.php', {
      imei: device.imei,
      action: 'lock',
      user: suite.admin.email,
    });
    const lockId = lock.json().transactionId as string;
    await vi.waitFor(
      async () => expect((await eventsOf(device.imei)).map((e) => e.event)).toContain('command.executed'),
      {
        timeout: 15_000,
      },
    );
    const release = await call('locknotification.php', {
      imei: device.imei,
      action: 'release',
      user: suite.admin.email,
    });
    const releaseId = release.json().transactionId as string;
    await vi.waitFor(
      async () => expect((await eventsOf(device.imei)).map((e) => e.event)).toContain('device.released'),
      {
        timeout: 15_000,
      },
    );
    const events = await eventsOf(device.imei);
    expect(events.map((e) => e.event)).toEqual([
      'device.registered',
      'command.executed',
      'command.executed',
      'device.released',
    ]);
    expect(events[0]?.data).toMatchObject({
      imei1: device.imei,
      registrationStatus: 'REGISTERED',
      brand: 'Samsung',
    });
    expect(events[1]?.data).toMatchObject({
      transactionId: lockId,
      command: 'LOCK',
      interface: 'S',
      batchId: null,
    });
    expect(events[2]?.data).toMatchObject({ transactionId: releaseId, command: 'RELEASE' });
    expect(events[3]?.data).toMatchObject({
      imei1: device.imei,
      transactionId: releaseId,
      releasedBy: suite.admin.email,
    });
    // The real receiver verified each signature and got each event once.
    await vi.waitFor(
      () =>
        expect(
          receiver.received.filter((r) => (r.body.data as { imei1?: string }).imei1 === device.imei),
        ).toHaveLength(4),
      { timeout: 15_000 },
    );
    expect(receiver.rejected).toEqual([]);
  });

  it('a failed command, a cancelled one and an expired one', async () => {
    const failing = simulatedDevice(suite.server, { failRate: 1 });
    devices.push(failing);
    await failing.register();
    await failing.connect();
    const blocked = await call('locknotification.php', {
      imei: failing.imei,
      action: 'blockapp',
      user: suite.admin.email,
    });
    await vi.waitFor(
      async () => expect((await eventsOf(failing.imei)).map((e) => e.event)).toContain('command.failed'),
      {
        timeout: 15_000,
      },
    );
    expect((await eventsOf(failing.imei)).find((e) => e.event === 'command.failed')?.data).toMatchObject({
      transactionId: blocked.json().transactionId,
      command: 'BLOCKAPP',
    });

    const offline = simulatedDevice(suite.server);
    devices.push(offline);
    await offline.register(); // never connects: its commands wait
    const lock = await call('locknotification.php', {
      imei: offline.imei,
      action: 'lock',
      user: suite.admin.email,
    });
    const cancel = await call('v2/cancelCommand', { transactionId: lock.json().transactionId });
    expect(cancel.statusCode, cancel.body).toBe(200);
    const root = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { userlevel: 'SUPERADMIN' }),
    );
    const reboot = await suite.server.app.inject({
      method: 'POST',
      url: '/api/adminlocknotification.php',
      headers: { 'x-api-key': root.token },
      payload: { imei: offline.imei, action: 'REBOOT', user: root.email },
    });
    expect(reboot.statusCode, reboot.body).toBe(200);
    await suite.database.db
      .updateTable('commands')
      .set({ expires_at: new Date(Date.now() - 1000) })
      .where('transaction_id', '=', reboot.json().transactionId)
      .execute();
    await suite.server.app.ctx.commands.sweep();
    const events = await eventsOf(offline.imei);
    expect(events.map((e) => [e.event, e.data.transactionId ?? null])).toEqual([
      ['device.registered', null],
      ['command.cancelled', lock.json().transactionId],
      ['command.expired', reboot.json().transactionId],
    ]);
  });

  it('Formatted Device: the settled commands are cancelled and the device de-enrolled', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register();
    const lock = await call('locknotification.php', {
      imei: device.imei,
      action: 'lock',
      user: suite.admin.email,
    });
    const format = await call('formattedDevice.php', { imei: device.imei, user: suite.admin.email });
    expect(format.statusCode, format.body).toBe(200);
    const events = await eventsOf(device.imei);
    expect(events.map((e) => e.event)).toEqual([
      'device.registered',
      'command.cancelled',
      'device.deenrolled',
    ]);
    expect(events[1]?.data).toMatchObject({
      transactionId: lock.json().transactionId,
      result: DEENROLLED_RESULT,
    });
    expect(events[2]?.data).toMatchObject({ imei1: device.imei, transactionId: format.json().transactionId });
  });

  it('a re-registration that needs approval, and a finished batch', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register();
    // Another phone claims the IMEI with a new key and no proof: refused, waiting for an ADMIN.
    const impostor = simulatedDevice(suite.server, {
      profile: { imei1: device.imei, imei2: device.profile.imei2 },
    });
    await expect(impostor.register()).rejects.toThrow();
    const requested = (await eventsOf(device.imei)).filter(
      (e) => e.event === 'device.reregistration_requested',
    );
    expect(requested).toHaveLength(1);
    expect(requested[0]?.data).toMatchObject({
      imei1: device.imei,
      newKey: true,
      requestId: expect.any(Number),
    });

    const body = multipart(
      { user: suite.admin.email },
      { name: 'cameras.csv', type: 'text/csv', content: imeiCsv([device.imei, '356938035643809']) },
    );
    const upload = await suite.server.app.inject({
      method: 'POST',
      url: '/api/bulkDisableCameraCopy.php',
      headers: { ...body.headers, 'x-api-key': suite.admin.token },
      payload: body.payload,
    });
    expect(upload.statusCode, upload.body).toBe(200);
    const batchId = upload.json().batchId as number;
    await vi.waitFor(
      async () => {
        const rows = await suite.database.db
          .selectFrom('webhook_deliveries')
          .select('payload')
          .where('event', '=', 'batch.completed')
          .execute();
        expect(rows.map((r) => (r.payload as { data: unknown }).data)).toContainEqual({
          batchId,
          command: 'DISABLECAMERA',
          fileName: 'cameras.csv',
          total: 2,
          found: 1,
          notFound: 1,
        });
      },
      { timeout: 20_000 },
    );
    await receiver.stop();
  });
});
