/**
 * Issue 17.7 (the demo part): the demo's invented history is chronological for every device. Seeded as
 * `npm start` seeds it (a small fleet), every device's first registration comes before its commands,
 * its commands keep the order they were issued in, a de-enrollment comes after the Formatted Device
 * command that caused it and no command is dated after it, a release comes after its Release command,
 * and a re-registration comes after the de-enrollment.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COLLECTIONS_POLICY } from '@lendlock/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Demo, startDemo } from '../src/demo';
import { openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, startDeviceServer } from './devices';
import { buildUser, loginAs } from './factories';

describe('the demo history', () => {
  let database: TestDatabase;
  let server: DeviceServer;
  let demo: Demo | null = null;
  const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-demo-'));

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    await buildUser(database, { userlevel: 'SUPERADMIN' });
    await buildUser(database, { userlevel: 'ADMIN' });
    server = await startDeviceServer(database, 'embedded');
    demo = await startDemo(server.app, { url: server.url, dataDir, devices: 40, seedHistory: true });
  }, 180_000);

  afterAll(async () => {
    await demo?.stop();
    await server?.close();
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const ms = (value: Date | string) => new Date(value).getTime();

  it('is seeded: commands of many kinds, releases, de-enrollments and re-registrations', async () => {
    const commands = await database.db.selectFrom('commands').select(['command']).execute();
    expect(new Set(commands.map((c) => c.command)).size).toBeGreaterThan(5);
    expect(commands.some((c) => c.command === 'FORMATTEDDEVICE')).toBe(true);
    expect(await database.db.selectFrom('releases').select('id').execute()).not.toHaveLength(0);
    expect(await database.db.selectFrom('deenrollments').select('id').execute()).not.toHaveLength(0);
  });

  it('gives some devices a loan, with the payments that got it where it is', async () => {
    const loans = await database.db.selectFrom('loans').select(['id', 'imei']).execute();
    expect(loans.length).toBeGreaterThanOrEqual(3);
    const payments = await database.db.selectFrom('loan_payments').select('loan_id').execute();
    expect(payments.length).toBeGreaterThan(loans.length);
    const paid = await database.db
      .selectFrom('loan_instalments')
      .select('loan_id')
      .where('paid_at', 'is not', null)
      .execute();
    expect(new Set(paid.map((p) => Number(p.loan_id))).size).toBe(loans.length);
  });

  it('its dry run locks the overdue loans: no lock is skipped for the payments seeded today', async () => {
    const admin = await loginAs(server.app, await buildUser(database, { userlevel: 'ADMIN' }));
    const response = await server.app.inject({
      method: 'POST',
      url: '/api/v2/collections/plan',
      headers: { 'x-api-key': admin.token },
      payload: { policy: { ...DEFAULT_COLLECTIONS_POLICY, enabled: true }, filter: 'LOCK' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const { counts } = response.json();
    expect(counts.LOCK).toBeGreaterThanOrEqual(2);
    expect(counts.skipped.recentPayment).toBe(0);
  });

  it('is chronological for every device', async () => {
    const registrations = await database.db
      .selectFrom('registrations')
      .select(['id', 'imei1', 'created_at'])
      .orderBy('id')
      .execute();
    const commands = await database.db
      .selectFrom('commands')
      .select(['id', 'imei1', 'command', 'created_at', 'sent_at', 'completed_at'])
      .orderBy('id')
      .execute();
    const deenrollments = await database.db
      .selectFrom('deenrollments')
      .select(['imei1', 'created_at'])
      .execute();
    const releases = await database.db
      .selectFrom('releases')
      .select(['imei1', 'transaction_id', 'created_at'])
      .execute();
    const devices = await database.db.selectFrom('devices').select(['imei1', 'created_at']).execute();
    const problems: string[] = [];
    for (const device of devices) {
      const own = <T extends { imei1: string }>(rows: T[]) => rows.filter((r) => r.imei1 === device.imei1);
      const regs = own(registrations);
      const cmds = own(commands);
      const deen = own(deenrollments);
      const first = regs[0];
      if (!first) continue;
      const at = (what: string, value: Date) =>
        `${device.imei1}: ${what} at ${new Date(value).toISOString()}`;
      if (ms(device.created_at) !== ms(first.created_at))
        problems.push(at('device created', device.created_at));
      // Registrations and commands keep the order they happened in.
      for (let i = 1; i < regs.length; i++)
        if (ms(regs[i]?.created_at as Date) <= ms(regs[i - 1]?.created_at as Date))
          problems.push(at('re-registration before the registration', regs[i]?.created_at as Date));
      for (let i = 0; i < cmds.length; i++) {
        const command = cmds[i] as (typeof cmds)[number];
        if (ms(command.created_at) < ms(first.created_at))
          problems.push(at(`${command.command} before the registration`, command.created_at));
        if (i > 0 && ms(command.created_at) < ms(cmds[i - 1]?.created_at as Date))
          problems.push(at(`${command.command} before the command issued before it`, command.created_at));
        for (const later of [command.sent_at, command.completed_at])
          if (later && ms(later) < ms(command.created_at))
            problems.push(at(`${command.command} sent or completed before it was issued`, later));
      }
      for (const e of deen) {
        const cause = cmds.filter(
          (c) => c.command === 'FORMATTEDDEVICE' && ms(c.created_at) <= ms(e.created_at),
        );
        if (cause.length === 0)
          problems.push(at('de-enrollment before its Formatted Device command', e.created_at));
        // Nothing is sent to a de-enrolled device until it registers again (this demo issues none after).
        const back = regs.find((r) => ms(r.created_at) > ms(e.created_at));
        for (const c of cmds)
          if (ms(c.created_at) > ms(e.created_at) && (!back || ms(c.created_at) < ms(back.created_at)))
            problems.push(at(`${c.command} after the de-enrollment`, c.created_at));
        if (regs.length > 1 && !back)
          problems.push(at('re-registration before the de-enrollment', e.created_at));
      }
      for (const release of own(releases)) {
        const cause = cmds.find((c) => c.command === 'RELEASE');
        if (!cause || ms(cause.created_at) > ms(release.created_at))
          problems.push(at('release before its Release command', release.created_at));
        for (const c of cmds)
          if (ms(c.created_at) > ms(release.created_at))
            problems.push(at(`${c.command} after the release`, c.created_at));
      }
    }
    expect(problems).toEqual([]);
  });
});
