/**
 * The device channel end to end: a real server (embedded broker, and Mosquitto when it answers) and
 * simulated agents speaking MQTT to it.
 */
import { type CommandStatus, MESSAGES, topics } from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandService } from '../src/modules/commands/service';
import { REGISTRATION_MESSAGES } from '../src/modules/devices/registration';
import { channelKinds, databaseKinds, openTestDatabase, type TestDatabase } from './db';
import {
  type DeviceServer,
  randomProfile,
  simulatedDevice,
  startDeviceServer,
  TEST_ENROLLMENT_SECRET,
} from './devices';
import { buildUser, loginAs } from './factories';

const combos = databaseKinds().flatMap((db) => channelKinds().map((channel) => [db, channel] as const));

describe.each(combos)('devices on %s with the %s broker', (kind, channel) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let commands: CommandService;
  const devices: SimulatedDevice[] = [];

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, channel);
    commands = server.app.ctx.commands;
  });
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
    await server?.close();
    await database?.close();
  });

  const device = (options: Parameters<typeof simulatedDevice>[1] = {}) => {
    const created = simulatedDevice(server, options);
    devices.push(created);
    return created;
  };
  const statusOf = async (transactionId: string) =>
    (
      await database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow()
    ).status;
  const eventually = (transactionId: string, status: CommandStatus) =>
    vi.waitFor(async () => expect(await statusOf(transactionId)).toBe(status), {
      timeout: 8000,
      interval: 50,
    });
  const online = (imei: string, value: boolean) =>
    vi.waitFor(
      async () => {
        const row = await database.db
          .selectFrom('devices')
          .select('online')
          .where('imei1', '=', imei)
          .executeTakeFirstOrThrow();
        expect(row.online).toBe(value);
      },
      { timeout: 8000, interval: 50 },
    );

  it('a command reaches the device and its own acknowledgement makes it EXECUTED', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const issued = await commands.issue({ imei: agent.imei, command: 'LOCK', iface: 'S', actor: null });
    expect(issued.status).toBe('QUEUED');
    await eventually(issued.transactionId, 'EXECUTED');
    expect(agent.state.locked).toBe(true);
    expect(agent.received.map((m) => m.id)).toEqual([issued.transactionId]);
    const row = await database.db
      .selectFrom('devices')
      .select(['reported_state', 'last_command'])
      .where('imei1', '=', agent.imei)
      .executeTakeFirstOrThrow();
    expect(row.last_command).toBe('LOCK');
    // Executed at once: its outcome is its only acknowledgement, and it counts as delivered when it came.
    expect(agent.acks.map((a) => a.status)).toEqual(['EXECUTED']);
    const command = await database.db
      .selectFrom('commands')
      .select(['delivered_at', 'completed_at'])
      .where('transaction_id', '=', issued.transactionId)
      .executeTakeFirstOrThrow();
    expect(command.delivered_at).not.toBeNull();
    expect(command.delivered_at).toEqual(command.completed_at);
    await vi.waitFor(async () => {
      const fresh = await database.db
        .selectFrom('devices')
        .select('reported_state')
        .where('imei1', '=', agent.imei)
        .executeTakeFirstOrThrow();
      expect(fresh.reported_state?.locked).toBe(true);
    });
  });

  it('a command that takes time is DELIVERED first, then EXECUTED', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const issued = await commands.issue({ imei: agent.imei, command: 'REBOOT', iface: 'S', actor: null });
    await eventually(issued.transactionId, 'EXECUTED');
    expect(agent.acks.map((a) => [a.id, a.status])).toEqual([
      [issued.transactionId, 'DELIVERED'],
      [issued.transactionId, 'EXECUTED'],
    ]);
    expect(agent.executions.get(issued.transactionId)).toBe(1);
  });

  it('a failing device makes the command FAILED', async () => {
    const agent = device({ failRate: 1 });
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const issued = await commands.issue({ imei: agent.imei, command: 'BLOCKAPP', iface: 'S', actor: null });
    await eventually(issued.transactionId, 'FAILED');
    expect(agent.state.appsBlocked).toBe(false);
  });

  it('an offline device sent lock then unlock ends unlocked after reconnecting, the lock SUPERSEDED', async () => {
    const agent = device();
    const credentials = await agent.register();
    const lock = await commands.issue({ imei: agent.imei, command: 'LOCK', iface: 'S', actor: null });
    const unlock = await commands.issue({ imei: agent.imei, command: 'UNLOCK', iface: 'S', actor: null });
    expect(await statusOf(lock.transactionId)).toBe('SUPERSEDED');
    expect(await statusOf(unlock.transactionId)).toBe('QUEUED');
    await agent.connect(credentials);
    await eventually(unlock.transactionId, 'EXECUTED');
    expect(agent.state.locked).toBe(false);
    expect(agent.received.map((m) => m.command)).toEqual(['UNLOCK']);
    expect(await statusOf(lock.transactionId)).toBe('SUPERSEDED');
  });

  it('a redelivered command executes once', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const issued = await commands.issue({ imei: agent.imei, command: 'SETALARM', iface: 'S', actor: null });
    await eventually(issued.transactionId, 'EXECUTED');
    // Force a resend of the same command id (as after a lost acknowledgement).
    await database.db
      .updateTable('commands')
      .set({ status: 'SENT' })
      .where('transaction_id', '=', issued.transactionId)
      .execute();
    await commands.dispatch(agent.imei, true);
    await vi.waitFor(() =>
      expect(agent.received.filter((m) => m.id === issued.transactionId)).toHaveLength(2),
    );
    await eventually(issued.transactionId, 'EXECUTED');
    expect(agent.executions.get(issued.transactionId)).toBe(1);
  });

  it('a command DELIVERED to an agent that stopped before executing it is executed once it is back', async () => {
    const agent = device();
    const credentials = await agent.register();
    await agent.connect(credentials);
    await online(agent.imei, true);
    agent.crashAfterNextDelivery = true;
    const issued = await commands.issue({ imei: agent.imei, command: 'UPDATE', iface: 'S', actor: null });
    await eventually(issued.transactionId, 'DELIVERED');
    await online(agent.imei, false);
    expect(agent.executions.get(issued.transactionId)).toBeUndefined();
    // Back online: the unfinished command is sent again and executed, once.
    await agent.connect(credentials);
    await eventually(issued.transactionId, 'EXECUTED');
    expect(agent.received.filter((m) => m.id === issued.transactionId)).toHaveLength(2);
    expect(agent.executions.get(issued.transactionId)).toBe(1);
    // An agent that had executed it before stopping answers 'already executed' and does not do it twice.
    await database.db
      .updateTable('commands')
      .set({ status: 'DELIVERED', completed_at: null })
      .where('transaction_id', '=', issued.transactionId)
      .execute();
    await agent.dropOffline();
    await online(agent.imei, false);
    await agent.connect(credentials);
    await eventually(issued.transactionId, 'EXECUTED');
    expect(agent.received.filter((m) => m.id === issued.transactionId)).toHaveLength(3);
    expect(agent.executions.get(issued.transactionId)).toBe(1);
  });

  it('a cancelled pending command never reaches the device', async () => {
    const agent = device();
    const credentials = await agent.register();
    const issued = await commands.issue({
      imei: agent.imei,
      command: 'DISABLECAMERA',
      iface: 'S',
      actor: null,
    });
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const session = await loginAs(server.app, admin);
    const pending = await server.app.inject({
      method: 'POST',
      url: '/api/v2/pendingCommands',
      headers: { 'x-api-key': session.token },
      payload: { imei: agent.imei },
    });
    expect(pending.json().items.map((c: { transactionId: string }) => c.transactionId)).toEqual([
      issued.transactionId,
    ]);
    const cancel = await server.app.inject({
      method: 'POST',
      url: '/api/v2/cancelCommand',
      headers: { 'x-api-key': session.token },
      payload: { transactionId: issued.transactionId },
    });
    expect(cancel.json()).toEqual({ status: 'success', message: 'Command cancelled' });
    const later = await commands.issue({ imei: agent.imei, command: 'SETALARM', iface: 'S', actor: null });
    await agent.connect(credentials);
    await eventually(later.transactionId, 'EXECUTED');
    expect(agent.received.map((m) => m.id)).not.toContain(issued.transactionId);
    expect(agent.state.cameraDisabled).toBe(false);
    expect(await statusOf(issued.transactionId)).toBe('CANCELLED');
    const again = await server.app.inject({
      method: 'POST',
      url: '/api/v2/cancelCommand',
      headers: { 'x-api-key': session.token },
      payload: { transactionId: later.transactionId },
    });
    expect(again.statusCode).toBe(409);
  });

  it('refuses an unknown IMEI with "not found" (no device registered) and a released device with a clear message', async () => {
    await expect(
      commands.issue({ imei: '999999999999999', command: 'LOCK', iface: 'S', actor: null }),
    ).rejects.toMatchObject({
      statusCode: 404,
      message: MESSAGES.commandNotRegistered,
    });
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const release = await commands.issue({ imei: agent.imei, command: 'RELEASE', iface: 'S', actor: null });
    await expect(
      commands.issue({ imei: agent.imei, command: 'LOCK', iface: 'S', actor: null }),
    ).rejects.toMatchObject({
      statusCode: 409,
      message: 'This device has been released and accepts no further commands.',
    });
    await eventually(release.transactionId, 'EXECUTED');
    const row = await database.db
      .selectFrom('devices')
      .select('claimstatus')
      .where('imei1', '=', agent.imei)
      .executeTakeFirstOrThrow();
    expect(row.claimstatus).toBe('RELEASED');
    const releases = await database.db
      .selectFrom('releases')
      .selectAll()
      .where('imei1', '=', agent.imei)
      .execute();
    expect(releases).toHaveLength(1);
  });

  it('a formatted phone that registers again is brought back to its desired state', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    const lock = await commands.issue({ imei: agent.imei, command: 'LOCK', iface: 'S', actor: null });
    await eventually(lock.transactionId, 'EXECUTED');
    await agent.dropOffline();
    await commands.issue({ imei: agent.imei, command: 'FORMATTEDDEVICE', iface: 'S', actor: null });
    // The agent is reinstalled: it registers again from a clean phone.
    await agent.register();
    expect(agent.state.locked).toBe(false);
    await agent.connect();
    await vi.waitFor(() => expect(agent.state.locked).toBe(true), { timeout: 8000, interval: 50 });
    const deenroll = await database.db
      .selectFrom('deenrollments')
      .select('action')
      .where('imei1', '=', agent.imei)
      .orderBy('id')
      .execute();
    expect(deenroll.map((d) => d.action)).toEqual(['DEENROLLED', 'RE-REGISTERED']);
  });

  it('keeps commands QUEUED while the device is offline and delivers them when it is back', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    await online(agent.imei, true);
    await agent.dropOffline();
    await online(agent.imei, false);
    const notify = await commands.issue({
      imei: agent.imei,
      command: 'NOTIFY',
      options: { message: 'Pay', caseType: 'Due' },
      iface: 'S',
      actor: null,
    });
    // Barrier: the dispatch after its commit done, and a dispatch and a sweep of our own (what the sweeper
    // does) sent nothing to the offline device.
    await commands.drain();
    expect(await commands.dispatch(agent.imei)).toBe(0);
    await commands.sweep();
    expect(await statusOf(notify.transactionId)).toBe('QUEUED');
    await agent.connect();
    await eventually(notify.transactionId, 'EXECUTED');
  });

  it('refuses registration without the enrollment secret, and matches financed IMEIs', async () => {
    const profile = randomProfile();
    const refused = await fetch(`${server.url}/device/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-enrollment-secret': 'wrong-secret-wrong-secret' },
      body: JSON.stringify(profile),
    });
    expect(refused.status).toBe(401);
    const admin = await loginAs(server.app, await buildUser(database, { userlevel: 'ADMIN' }));
    const imported = await server.app.inject({
      method: 'POST',
      url: '/api/v2/financedImeis',
      headers: { 'x-api-key': admin.token },
      payload: { imeis: [profile.imei1] },
    });
    expect(imported.json().added).toBe(1);
    const ok = await fetch(`${server.url}/device/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
      body: JSON.stringify(profile),
    });
    expect(ok.status).toBe(200);
    const body = (await ok.json()) as { registrationstatus: string; credential: string };
    expect(body.registrationstatus).toBe('REGISTERED');
    expect(body.credential.length).toBeGreaterThanOrEqual(24);
    const row = await database.db
      .selectFrom('devices')
      .selectAll()
      .where('imei1', '=', profile.imei1)
      .executeTakeFirstOrThrow();
    expect(row.match_status).toBe('YES');
    expect(row.credential_hash).not.toBe(body.credential);
    const again = await fetch(`${server.url}/device/v1/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
      body: JSON.stringify(profile),
    });
    // The same IMEI on the secret alone, with no proof: refused, and kept for an operator.
    expect(again.status).toBe(409);
    expect(((await again.json()) as { code: string }).code).toBe('REREGISTRATION_NEEDS_APPROVAL');
    const unchanged = await database.db
      .selectFrom('devices')
      .select('credential_hash')
      .where('imei1', '=', profile.imei1)
      .executeTakeFirstOrThrow();
    expect(unchanged.credential_hash).toBe(row.credential_hash);
  });

  it.runIf(channel === 'embedded')(
    'a device that registers again or is de-enrolled loses its open connection at once',
    async () => {
      const agent = device();
      const first = await agent.register();
      await agent.connect(first);
      await online(agent.imei, true);
      const old = agent.mqttClient;
      const closed = new Promise<void>((resolve) => old?.once('close', () => resolve()));
      // The agent registers again (a re-installed app): the connection made with the old credential ends.
      const second = await agent.register();
      expect(second.credential).not.toBe(first.credential);
      await closed;
      await online(agent.imei, false);
      await agent.dropOffline();
      // The old credential no longer admits anyone; the new one does.
      await expect(agent.connect(first)).rejects.toThrow();
      await agent.dropOffline();
      await agent.connect(second);
      await online(agent.imei, true);
      // Formatted: the server de-enrolls the device and ends its connection.
      const gone = new Promise<void>((resolve) => agent.mqttClient?.once('close', () => resolve()));
      await commands.issue({ imei: agent.imei, command: 'FORMATTEDDEVICE', iface: 'S', actor: null });
      await gone;
      await online(agent.imei, false);
      await agent.dropOffline();
      await expect(agent.connect(second)).rejects.toThrow();
      await agent.dropOffline();
    },
  );

  it.runIf(channel === 'embedded')(
    'throttles wrong enrollment secrets per address, with Retry-After, right secret or not',
    async () => {
      const strict = await startDeviceServer(database, 'embedded', { loginMaxFailuresPerAddress: 3 });
      const register = (secret: string) =>
        fetch(`${strict.url}/device/v1/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-enrollment-secret': secret },
          body: JSON.stringify(randomProfile()),
        });
      try {
        await database.db.deleteFrom('login_throttle').where('key', 'like', 'enroll-addr:%').execute();
        for (let i = 0; i < 3; i++) expect((await register('wrong-secret-wrong-secret')).status).toBe(401);
        const blocked = await register(TEST_ENROLLMENT_SECRET);
        expect(blocked.status).toBe(429);
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(((await blocked.json()) as { message: string }).message).toBe(
          REGISTRATION_MESSAGES.throttled(15),
        );
        // When the window has passed (its row gone), the right secret registers again.
        await database.db.deleteFrom('login_throttle').where('key', 'like', 'enroll-addr:%').execute();
        expect((await register(TEST_ENROLLMENT_SECRET)).status).toBe(200);
      } finally {
        await database.db.deleteFrom('login_throttle').where('key', 'like', 'enroll-addr:%').execute();
        await strict.close();
      }
    },
  );

  it.runIf(channel === 'embedded')('confines a device to its own topics', async () => {
    const agent = device();
    await agent.register();
    await agent.connect();
    const victim = device();
    const victimCredentials = await victim.register();
    const issued = await commands.issue({ imei: victim.imei, command: 'LOCK', iface: 'S', actor: null });
    const client = agent.mqttClient;
    if (!client) throw new Error('not connected');
    // The broker refuses the subscription (SUBACK failure code 0x80).
    await expect(client.subscribeAsync(topics.cmd(victim.imei), { qos: 1 })).rejects.toThrow(
      /Subscribe error/,
    );
    // A forged acknowledgement for another IMEI is refused by the broker (and the connection dropped).
    // Barrier: the drop, which the broker decides before it would route the message to anyone.
    const dropped = new Promise<void>((resolve) => client.once('close', () => resolve()));
    client.publish(
      topics.ack(victim.imei),
      JSON.stringify({ id: issued.transactionId, status: 'EXECUTED' }),
      { qos: 0 },
    );
    await dropped;
    expect(await statusOf(issued.transactionId)).toBe('QUEUED');
    // A wrong credential cannot connect at all.
    await expect(
      victim.connect({ ...victimCredentials, credential: 'not-the-credential' }),
    ).rejects.toThrow();
  });
});

describe.each(databaseKinds())('device reads on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded');
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('serves the dashboard, device details, the audit report and app versions with the spec shapes', async () => {
    const agent = simulatedDevice(server, { profile: { appversion: '9.9.9' } });
    await agent.register();
    await agent.connect();
    const user = await buildUser(database, { permissions: ['deviceDetails', 'auditReport', 'appversion'] });
    const session = await loginAs(server.app, user);
    const headers = { 'x-api-key': session.token };
    const lock = await server.app.ctx.commands.issue({
      imei: agent.imei,
      command: 'LOCKWALLPAPER',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(async () => {
      const row = await database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', lock.transactionId)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('EXECUTED');
    });

    const home = (await server.app.inject({ url: '/api/homeData.php', headers })).json();
    expect(home).toEqual({ status: 'success', total_device: 1, device_today: 1, deenroll: 0 });

    const details = (
      await server.app.inject({
        method: 'POST',
        url: '/api/devicedetails.php',
        headers,
        payload: { imei: agent.profile.imei2 },
      })
    ).json();
    expect(details.items).toHaveLength(1);
    expect(details.items[0]).toMatchObject({
      imei1: agent.imei,
      claimstatus: 'ENROLLED',
      registrationstatus: 'REGISTERED',
      appversion: '9.9.9',
      command: 'LOCKWALLPAPER',
      brand: 'Samsung',
      online: true,
    });
    const none = (
      await server.app.inject({
        method: 'POST',
        url: '/api/devicedetails.php',
        headers,
        payload: { imei: '111111111111111' },
      })
    ).json();
    expect(none).toEqual({ status: 'success', items: [], message: MESSAGES.noResults });

    const audit = (
      await server.app.inject({
        method: 'POST',
        url: '/api/auditReportByImei.php',
        headers,
        payload: { imei1: agent.imei },
      })
    ).json();
    expect(audit.registration).toHaveLength(1);
    expect(audit.registration[0]).toMatchObject({
      imei1: agent.imei,
      Match_Status: 'NO',
      Registration_status: 'REGISTERED',
      brand: 'Samsung',
    });
    expect(audit.commands[0]).toMatchObject({
      transactionId: lock.transactionId,
      command: 'LOCKWALLPAPER',
      status: 'EXECUTED',
      interface: 'S',
      user: 'system',
    });
    expect(audit.release).toEqual([]);
    expect(audit.deenroll).toEqual([]);

    const versions = (
      await server.app.inject({ method: 'POST', url: '/api/getAppVersionDevices.php', headers, payload: {} })
    ).json();
    expect(versions.items).toEqual([{ appversion: '9.9.9', devices: 1 }]);

    const plain = await loginAs(server.app, await buildUser(database));
    const refused = await server.app.inject({
      method: 'POST',
      url: '/api/auditReportByImei.php',
      headers: { 'x-api-key': plain.token },
      payload: { imei1: agent.imei },
    });
    expect(refused.statusCode).toBe(403);
    await agent.disconnect();
  });

  it('counts de-enrolled devices and today registrations', async () => {
    const count = await database.db
      .selectFrom('devices')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBeGreaterThanOrEqual(1);
  });
});
