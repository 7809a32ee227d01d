/**
 * Device Details tells the truth about a device's state. Each setting's standing in the
 * device details answer (contract settingStandings): an enrolled device's setting is PENDING until the
 * device reports it, then IN_EFFECT; a de-enrolled (formatted) device has nothing pending (its commands
 * were cancelled, its agent is gone) and what it must have again is ON_REGISTRATION, re-applied when it
 * registers again; a released device has nothing pending.
 */
import type { DeviceRecord, DeviceStandings, RawCommand } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { databaseKinds } from './db';
import { deviceSuite, simulatedDevice } from './devices';

const NONE: DeviceStandings = {
  locked: null,
  appsBlocked: null,
  greyed: null,
  wallpaper: null,
  alarm: null,
  cameraDisabled: null,
  credit: null,
  released: null,
};
const ALL_IN_EFFECT: DeviceStandings = {
  locked: 'IN_EFFECT',
  appsBlocked: 'IN_EFFECT',
  greyed: 'IN_EFFECT',
  wallpaper: 'IN_EFFECT',
  alarm: 'IN_EFFECT',
  cameraDisabled: 'IN_EFFECT',
  credit: 'IN_EFFECT',
  released: 'IN_EFFECT',
};

describe.each(databaseKinds())('Device Details state on %s', (kind) => {
  const suite = deviceSuite(kind);

  const agent = () => {
    const created = simulatedDevice(suite.server);
    suite.devices.push(created);
    return created;
  };
  const issue = (imei: string, command: RawCommand) =>
    suite.server.app.ctx.commands.issue({ imei, command, iface: 'S', actor: null });
  const details = async (imei: string): Promise<DeviceRecord> => {
    const response = await suite.server.app.inject({
      method: 'POST',
      url: '/api/devicedetails.php',
      headers: { 'x-api-key': suite.admin.token },
      payload: { imei },
    });
    expect(response.statusCode).toBe(200);
    const [device] = response.json().items as DeviceRecord[];
    if (!device) throw new Error(`no details for ${imei}`);
    return device;
  };
  const statusOf = async (transactionId: string) =>
    (
      await suite.database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', transactionId)
        .executeTakeFirstOrThrow()
    ).status;
  const waitFor = (check: () => Promise<void>) => vi.waitFor(check, { timeout: 8000, interval: 50 });

  it('shows a de-enrolled device with nothing pending: its restrictions return when it registers again', async () => {
    const phone = agent();
    await phone.register();
    await phone.connect();
    const wallpaper = await issue(phone.imei, 'LOCKWALLPAPER');
    await waitFor(async () => expect(await statusOf(wallpaper.transactionId)).toBe('EXECUTED'));
    await waitFor(async () => expect((await details(phone.imei)).standing.wallpaper).toBe('IN_EFFECT'));
    // Offline, the phone is sent a lock and a camera block: pending, until it is formatted.
    await phone.dropOffline();
    await waitFor(async () => expect((await details(phone.imei)).online).toBe(false));
    const lock = await issue(phone.imei, 'LOCK');
    const camera = await issue(phone.imei, 'DISABLECAMERA');
    expect((await details(phone.imei)).standing).toEqual({
      ...ALL_IN_EFFECT,
      locked: 'PENDING',
      cameraDisabled: 'PENDING',
    });

    await issue(phone.imei, 'FORMATTEDDEVICE');
    expect(await statusOf(lock.transactionId)).toBe('CANCELLED');
    expect(await statusOf(camera.transactionId)).toBe('CANCELLED');
    const deenrolled = await details(phone.imei);
    expect(deenrolled).toMatchObject({
      claimstatus: 'DEENROLLED',
      online: false,
      // What the phone last reported, and what it is to have again: both as the database has them.
      state: { wallpaper: true, locked: false, cameraDisabled: false },
      desired: { wallpaper: true, locked: true, cameraDisabled: true },
    });
    expect(deenrolled.standing).toEqual({
      ...NONE,
      locked: 'ON_REGISTRATION',
      cameraDisabled: 'ON_REGISTRATION',
      wallpaper: 'ON_REGISTRATION',
    });

    // What ON_REGISTRATION promises: the reinstalled agent registers again and is brought back. Until
    // it reports, nothing is known of the clean phone: not what the formatted one last said.
    await phone.register();
    const registered = await details(phone.imei);
    expect(registered).toMatchObject({ claimstatus: 'ENROLLED', state: null, online: false });
    expect(registered.standing).toEqual(NONE);
    await phone.connect();
    await waitFor(async () => {
      const back = await details(phone.imei);
      expect(back.claimstatus).toBe('ENROLLED');
      expect(back.standing).toEqual(ALL_IN_EFFECT);
    });
    expect(phone.state).toMatchObject({ locked: true, cameraDisabled: true, wallpaper: true });
  });

  it('shows nothing pending for a released device, and nothing before a device first reports', async () => {
    const phone = agent();
    await phone.register();
    expect((await details(phone.imei)).standing).toEqual(NONE);
    await phone.connect();
    const release = await issue(phone.imei, 'RELEASE');
    await waitFor(async () => expect(await statusOf(release.transactionId)).toBe('EXECUTED'));
    const released = await details(phone.imei);
    expect(released.claimstatus).toBe('RELEASED');
    expect(released.standing).toEqual(ALL_IN_EFFECT);
    // A released phone's agent that reports a restriction it should not have: nothing is sent to a
    // released device, so nothing is pending.
    await suite.database.db
      .updateTable('devices')
      .set({ reported_state: JSON.stringify({ ...released.state, locked: true }) })
      .where('imei1', '=', phone.imei)
      .execute();
    expect((await details(phone.imei)).standing).toEqual({ ...ALL_IN_EFFECT, locked: null });
  });
});
