/**
 * Every single-device command through the spec's calls, to simulated devices, with their rules: the
 * screen's permission, the caller's own name, a retailer's own devices, the interface that sent it, and the
 * device action for a SUPERADMIN only.
 */
import {
  COMMAND_DEFINITIONS,
  type CommandDefinition,
  DEVICE_ACTION_SUCCESS,
  MESSAGES,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { COMMAND_ROUTE_MESSAGES } from '../src/modules/commands/routes';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';
import { buildKey, buildUser, loginAs } from './factories';

const STATE_AFTER: Partial<Record<string, (s: SimulatedDevice['state']) => boolean>> = {
  RELEASE: (s) => s.released,
  LOCK: (s) => s.locked,
  UNLOCK: (s) => !s.locked,
  BLOCKAPP: (s) => s.appsBlocked,
  UNBLOCKAPP: (s) => !s.appsBlocked,
  GREYAPP: (s) => s.greyed !== null,
  UNGREYAPP: (s) => s.greyed === null,
  UNLOCKWALLPAPER: (s) => !s.wallpaper,
  SETALARM: (s) => s.alarm,
  UNSETALARM: (s) => !s.alarm,
  ENABLECAMERA: (s) => !s.cameraDisabled,
  DISABLECAMERA: (s) => s.cameraDisabled,
  ENABLECREDIT: (s) => s.credit,
  REVOKECREDIT: (s) => !s.credit,
};

describe.each(databaseKinds())('single commands on %s', (kind) => {
  const suite = deviceSuite(kind);
  const { devices } = suite;

  const onlineDevice = async (profile: Parameters<typeof simulatedDevice>[1] = {}) => {
    const device = simulatedDevice(suite.server, profile);
    devices.push(device);
    await device.register();
    await device.connect();
    await vi.waitFor(async () => {
      const row = await suite.database.db
        .selectFrom('devices')
        .select('online')
        .where('imei1', '=', device.imei)
        .executeTakeFirstOrThrow();
      expect(row.online).toBe(true);
    });
    return device;
  };
  const call = (token: string, url: string, payload: object) =>
    suite.server.app.inject({ method: 'POST', url: `/api/${url}`, headers: { 'x-api-key': token }, payload });
  const commandCount = async () =>
    Number(
      (
        await suite.database.db
          .selectFrom('commands')
          .select(sql<number>`count(*)::int`.as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const statusOf = async (transactionId: string) =>
    (await call(suite.admin.token, 'v2/commandStatus', { transactionId })).json().command.status as string;

  const singles = COMMAND_DEFINITIONS.filter(
    (d) => d.single && d.raw !== 'FORMATTEDDEVICE',
  ) as CommandDefinition[];

  it.each(singles.map((d) => [d.screen, d] as const))(
    '%s: the device obeys and the spec success message comes back',
    async (_screen, definition) => {
      const device = await onlineDevice();
      const extra =
        definition.input === 'notify'
          ? { message: 'Dear A, your EMI is due.', caseType: 'Due' }
          : definition.input === 'grade'
            ? { level: 'level2' }
            : {};
      const response = await call(suite.admin.token, 'locknotification.php', {
        imei: device.imei,
        action: definition.action,
        user: suite.admin.email,
        ...extra,
      });
      expect(response.statusCode).toBe(200);
      const body = response.json();
      expect(body.message).toBe(definition.successMessage);
      await vi.waitFor(async () => expect(await statusOf(body.transactionId)).toBe('EXECUTED'), {
        timeout: 8000,
      });
      const check = STATE_AFTER[definition.raw];
      if (check) expect(check(device.state)).toBe(true);
      expect(device.received.at(-1)?.command).toBe(definition.raw);
      const row = await suite.database.db
        .selectFrom('commands')
        .select(['interface', 'user_label', 'options'])
        .where('transaction_id', '=', body.transactionId)
        .executeTakeFirstOrThrow();
      expect(row).toMatchObject({ interface: 'S', user_label: suite.admin.email });
      if (definition.input === 'grade') expect(row.options).toEqual({ level: 'level2' });
    },
  );

  it('Revoke Credit sends a revoke command, never an enable-credit one', async () => {
    const device = await onlineDevice();
    const on = (
      await call(suite.admin.token, 'locknotification.php', { imei: device.imei, action: 'credit' })
    ).json();
    await vi.waitFor(async () => expect(await statusOf(on.transactionId)).toBe('EXECUTED'));
    const off = (
      await call(suite.admin.token, 'locknotification.php', { imei: device.imei, action: 'revokecredit' })
    ).json();
    expect(off.message).toBe('Revoke Credit initiated successfully.');
    await vi.waitFor(async () => expect(await statusOf(off.transactionId)).toBe('EXECUTED'));
    expect(device.received.map((m) => m.command)).toEqual(['ENABLECREDIT', 'REVOKECREDIT']);
    expect(device.state.credit).toBe(false);
  });

  it('de-enrolls a formatted device with its message', async () => {
    const device = await onlineDevice();
    const response = await call(suite.admin.token, 'formattedDevice.php', {
      imei: device.imei,
      user: suite.admin.email,
      action: 'formatteddevice',
    });
    expect(response.json().message).toBe(
      'Formatted Device de-enrolled successfully. Re-install the app immediately',
    );
    const row = await suite.database.db
      .selectFrom('devices')
      .select('claimstatus')
      .where('imei1', '=', device.imei)
      .executeTakeFirstOrThrow();
    expect(row.claimstatus).toBe('DEENROLLED');
  });

  it('a USER without the screen permission is refused; nothing is recorded or sent', async () => {
    const device = await onlineDevice();
    const user = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { permissions: ['unlockDevice'] }),
    );
    const before = await commandCount();
    const response = await call(user.token, 'locknotification.php', { imei: device.imei, action: 'lock' });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toBe(MESSAGES.unauthorised);
    expect(await commandCount()).toBe(before);
    const allowed = await call(user.token, 'locknotification.php', { imei: device.imei, action: 'unlock' });
    expect(allowed.json().message).toBe('Unlock  Notification sent successfully.');
    // Barrier: the later unlock reaches the device, so a lock sent before it would have arrived first.
    await vi.waitFor(() => expect(device.received).not.toEqual([]), { timeout: 8000, interval: 20 });
    expect(device.received.map((c) => c.command)).toEqual(['UNLOCK']);
  });

  it('refuses a body that names someone else as user, recording nothing', async () => {
    const device = await onlineDevice();
    const before = await commandCount();
    const response = await call(suite.admin.token, 'locknotification.php', {
      imei: device.imei,
      action: 'lock',
      user: 'someone.else@lendlock.com',
    });
    expect(response.statusCode).toBe(403);
    expect(response.json().message).toBe(COMMAND_ROUTE_MESSAGES.userMismatch);
    expect(await commandCount()).toBe(before);
  });

  it('answers not found (no device registered) for an unknown IMEI and refuses a notification without text', async () => {
    const unknown = await call(suite.admin.token, 'locknotification.php', {
      imei: '123456789012345',
      action: 'lock',
    });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe(MESSAGES.commandNotRegistered);
    const device = await onlineDevice();
    const bare = await call(suite.admin.token, 'locknotification.php', {
      imei: device.imei,
      action: 'notify',
    });
    expect(bare.statusCode).toBe(400);
    const bad = await call(suite.admin.token, 'locknotification.php', { imei: '12345', action: 'lock' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain(MESSAGES.imeiHint);
  });

  it('records a command sent with an integrator key as interface A', async () => {
    const device = await onlineDevice();
    const { key } = await buildKey(suite.server.app, suite.database, { userlevel: 'ADMIN' }, 'partner');
    const response = await call(key, 'locknotification.php', { imei: device.imei, action: 'lock' });
    expect(response.statusCode).toBe(200);
    const row = await suite.database.db
      .selectFrom('commands')
      .select(['interface', 'key_id'])
      .where('transaction_id', '=', response.json().transactionId)
      .executeTakeFirstOrThrow();
    expect(row.interface).toBe('A');
    expect(row.key_id).not.toBeNull();
  });

  it('lets a retailer user act on their own devices only, with the dynamic table message', async () => {
    const own = await onlineDevice({ profile: { retailer_phone: '9111111111' } });
    const other = await onlineDevice({ profile: { retailer_phone: '9222222222' } });
    const retailer = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { permissions: ['blockApp'], retailerPhone: '9111111111' }),
    );
    const body = {
      action: 'blockapp',
      clientof: suite.server.app.ctx.config.clientCode,
      retailerNumber: '9111111111',
    };
    const ok = await call(retailer.token, 'locknotification.php', { imei: own.imei, ...body });
    expect(ok.json().message).toBe('Block App initiated successfully.');
    const before = await commandCount();
    const refused = await call(retailer.token, 'locknotification.php', { imei: other.imei, ...body });
    expect(refused.statusCode).toBe(404);
    const wrongRetailer = await call(retailer.token, 'locknotification.php', {
      imei: own.imei,
      ...body,
      retailerNumber: '9222222222',
    });
    expect(wrongRetailer.statusCode).toBe(403);
    const wrongClient = await call(retailer.token, 'locknotification.php', {
      imei: own.imei,
      ...body,
      clientof: 'OTHER',
    });
    expect(wrongClient.json().message).toBe(COMMAND_ROUTE_MESSAGES.unknownClient);
    expect(await commandCount()).toBe(before);
    expect(other.received).toEqual([]);
  });

  it('refuses the device action to an ADMIN and sends it to ALL enrolled devices for a SUPERADMIN', async () => {
    const fleet = [await onlineDevice(), await onlineDevice(), await onlineDevice()];
    const offline = simulatedDevice(suite.server);
    devices.push(offline);
    const offlineCredentials = await offline.register();
    const before = await commandCount();
    const refused = await call(suite.admin.token, 'adminlocknotification.php', {
      imei: 'ALL',
      action: 'REBOOT',
      user: suite.admin.email,
    });
    expect(refused.statusCode).toBe(403);
    expect(await commandCount()).toBe(before);

    const boss = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { userlevel: 'SUPERADMIN' }),
    );
    for (const [payload, message] of [
      [{ imei: '12345', action: 'REBOOT' }, MESSAGES.deviceActionImei],
      [{ imei: 'ALL', action: '' }, MESSAGES.deviceActionRequired],
      [{ imei: 'ALL', action: 'SHUTDOWN' }, MESSAGES.deviceActionInvalid],
    ] as const) {
      const response = await call(boss.token, 'adminlocknotification.php', payload);
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toBe(message);
    }
    const all = await call(boss.token, 'adminlocknotification.php', {
      imei: 'all',
      action: 'REBOOT',
      user: boss.email,
    });
    expect(all.json()).toMatchObject({ status: 'success', message: DEVICE_ACTION_SUCCESS });
    const { batchId, total } = all.json();
    const enrolled = await suite.database.db
      .selectFrom('devices')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('claimstatus', '=', 'ENROLLED')
      .where(sql<boolean>`coalesce((desired_state->>'released')::boolean, false) = false`)
      .executeTakeFirstOrThrow();
    expect(total).toBe(Number(enrolled.n));
    for (const device of fleet)
      await vi.waitFor(() => expect(device.received.map((m) => m.command)).toContain('REBOOT'));
    await offline.connect(offlineCredentials);
    await vi.waitFor(() => expect(offline.received.map((m) => m.command)).toContain('REBOOT'));
    const progress = (await call(boss.token, 'v2/batchStatus', { batchId })).json();
    expect(progress.total).toBe(total);
    const single = await call(boss.token, 'adminlocknotification.php', {
      imei: fleet[0]?.imei ?? '',
      action: 'UPDATE',
    });
    expect(single.json().message).toBe(DEVICE_ACTION_SUCCESS);
  });
});
