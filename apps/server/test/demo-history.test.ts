/**
 * The demo's invented history is chronological for every device. Seeded as
 * `npm start` seeds it (a small fleet), every device's first registration comes before its commands,
 * its commands keep the order they were issued in, a de-enrollment comes after the Formatted Device
 * command that caused it and no command is dated after it, a release comes after its Release command,
 * and a re-registration comes after the de-enrollment. Every invented row agrees with the
 * device's records: a Formatted Device command is at its de-enrollment, the commands it cancelled are
 * settled then, nothing happens to the device until it registers again, and a release is recorded when
 * its Release command is executed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_COLLECTIONS_POLICY } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Demo, startDemo } from '../src/demo';
import { DEENROLLED_RESULT } from '../src/modules/devices/repository';
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

  it('registers a phone with a loan before its loan starts: no instalment falls due or is paid before', async () => {
    const firsts = await database.db
      .selectFrom('registrations')
      .select(['imei1', (eb) => eb.fn.min('created_at').as('first')])
      .groupBy('imei1')
      .execute();
    const registeredAt = new Map(firsts.map((r) => [r.imei1, ms(r.first)]));
    const loans = await database.db
      .selectFrom('loans')
      .innerJoin('loan_instalments', 'loan_instalments.loan_id', 'loans.id')
      .select([
        'loans.imei',
        'loans.loan_ref',
        sql<string>`min(loan_instalments.due_date)::text`.as('first_due'),
      ])
      .groupBy(['loans.imei', 'loans.loan_ref'])
      .execute();
    const payments = await database.db
      .selectFrom('loan_payments')
      .innerJoin('loans', 'loans.id', 'loan_payments.loan_id')
      .select(['loans.imei', 'loan_payments.paid_at'])
      .execute();
    expect(loans.length).toBeGreaterThan(0);
    const problems: string[] = [];
    for (const loan of loans) {
      const registered = registeredAt.get(loan.imei) ?? Infinity;
      // A due date is a day (in the lender's zone): the phone is registered a day before it, at least.
      if (registered > ms(`${loan.first_due}T00:00:00Z`) - 86_400_000)
        problems.push(`${loan.loan_ref}: first due ${loan.first_due}, phone registered later`);
    }
    for (const payment of payments)
      if ((registeredAt.get(payment.imei) ?? Infinity) > ms(payment.paid_at))
        problems.push(
          `${payment.imei}: paid at ${new Date(payment.paid_at).toISOString()}, before it registered`,
        );
    expect(problems).toEqual([]);
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
      .where('action', '=', 'DEENROLLED')
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

  // Every invented row agrees with the device's de-enrollment, registration and release
  // records, as the real sequence made them (the Formatted Device command de-enrolls the device at once).
  it("agrees with every device's de-enrollment, registration and release records", async () => {
    const registrations = await database.db
      .selectFrom('registrations')
      .select(['imei1', 'created_at'])
      .orderBy('id')
      .execute();
    const commands = await database.db
      .selectFrom('commands')
      .select([
        'imei1',
        'transaction_id',
        'command',
        'state_key',
        'status',
        'result',
        'created_at',
        'sent_at',
        'delivered_at',
        'completed_at',
      ])
      .orderBy('id')
      .execute();
    const deenrollments = await database.db
      .selectFrom('deenrollments')
      .select(['imei1', 'action', 'created_at'])
      .orderBy('id')
      .execute();
    const releases = await database.db
      .selectFrom('releases')
      .select(['imei1', 'transaction_id', 'created_at'])
      .execute();
    const devices = await database.db
      .selectFrom('devices')
      .select(['imei1', 'claimstatus', 'created_at', 'registered_at', 'last_seen_at', 'offline_since'])
      .execute();
    const problems: string[] = [];
    let formattedSeen = 0;
    let reregisteredSeen = 0;
    for (const device of devices) {
      const own = <T extends { imei1: string }>(rows: T[]) => rows.filter((r) => r.imei1 === device.imei1);
      const regs = own(registrations).map((r) => ms(r.created_at));
      const cmds = own(commands);
      const records = own(deenrollments);
      const problem = (what: string, value: Date | string | null) =>
        problems.push(`${device.imei1}: ${what} at ${value ? new Date(value).toISOString() : 'null'}`);
      if (ms(device.registered_at) !== regs.at(-1))
        problem('registered_at not its last registration', device.registered_at);

      // Each de-enrollment is its Formatted Device command, at the same moment, in the same order.
      const deenrolled = records.filter((r) => r.action === 'DEENROLLED').map((r) => ms(r.created_at));
      const formatted = cmds.filter((c) => c.command === 'FORMATTEDDEVICE');
      formattedSeen += formatted.length;
      if (formatted.length !== deenrolled.length)
        problem('Formatted Device commands and de-enrollments differ', null);
      formatted.forEach((command, i) => {
        if (ms(command.created_at) !== deenrolled[i] || ms(command.completed_at as Date) !== deenrolled[i])
          problem(
            `Formatted Device command not at its de-enrollment ${new Date(deenrolled[i] ?? 0).toISOString()}`,
            command.created_at,
          );
      });
      // Each re-registration record is the registration that followed the de-enrollment before it.
      let deenrolledAt: number | null = null;
      for (const record of records) {
        const at = ms(record.created_at);
        if (record.action === 'DEENROLLED') {
          deenrolledAt = at;
          continue;
        }
        reregisteredSeen++;
        const next = regs.find((r) => deenrolledAt !== null && r > deenrolledAt);
        if (deenrolledAt === null || at !== next)
          problem(
            're-registration record not at the registration after its de-enrollment',
            record.created_at,
          );
        deenrolledAt = null;
      }
      // The commands a de-enrollment cancelled were issued before it and settled at its moment.
      const cancelled = (c: (typeof cmds)[number]) =>
        c.status === 'CANCELLED' && c.result === DEENROLLED_RESULT;
      for (const c of cmds.filter(cancelled)) {
        const at = ms(c.completed_at as Date);
        if (!deenrolled.includes(at) || ms(c.created_at) > at)
          problem(`${c.command} cancelled by a de-enrollment, settled at another time`, c.completed_at);
      }
      // A superseded command was settled when the next command on its key was issued.
      cmds.forEach((c, i) => {
        if (c.status !== 'SUPERSEDED') return;
        const next = cmds.slice(i + 1).find((n) => n.state_key === c.state_key);
        if (!next || ms(c.completed_at as Date) !== ms(next.created_at))
          problem(
            `${c.command} superseded at another time than the next ${c.state_key} command`,
            c.completed_at,
          );
      });
      // Between a de-enrollment and the next registration the device is gone: nothing is issued, sent,
      // acknowledged or settled then (but what the de-enrollment itself settled).
      for (const from of deenrolled) {
        const until = regs.find((r) => r > from) ?? Infinity;
        for (const c of cmds) {
          if (c.command === 'FORMATTEDDEVICE') continue;
          for (const moment of [
            c.created_at,
            c.sent_at,
            c.delivered_at,
            cancelled(c) ? null : c.completed_at,
          ])
            if (moment && ms(moment) >= from && ms(moment) < until)
              problem(`${c.command} ${c.status} while de-enrolled`, moment);
        }
      }
      if (device.claimstatus === 'DEENROLLED') {
        const last = deenrolled.at(-1) ?? 0;
        if (device.last_seen_at && ms(device.last_seen_at) > last)
          problem('last seen after its de-enrollment', device.last_seen_at);
        if (!device.offline_since || ms(device.offline_since) > last)
          problem('offline since after its de-enrollment', device.offline_since);
      }
      // A release is recorded when the phone executes its Release command; nothing is issued after.
      for (const release of own(releases)) {
        const cause = cmds.find((c) => c.transaction_id === release.transaction_id);
        if (cause?.command !== 'RELEASE' || ms(cause.completed_at as Date) !== ms(release.created_at))
          problem("release not at its Release command's execution", release.created_at);
        for (const c of cmds)
          if (c !== cause && ms(c.created_at) >= ms(cause?.created_at ?? release.created_at))
            problem(`${c.command} issued after the Release command`, c.created_at);
      }
    }
    expect(formattedSeen).toBeGreaterThan(0);
    expect(reregisteredSeen).toBeGreaterThan(0);
    expect(devices.some((d) => d.claimstatus === 'DEENROLLED')).toBe(true);
    expect(problems).toEqual([]);
  });

  it('dates who decided each key of the desired state with the command that decided it', async () => {
    const result = await sql<{ imei1: string; key: string; at: string; latest: Date | null }>`
      SELECT d.imei1, e.key, e.value ->> 'at' AS at,
        (SELECT max(c.created_at) FROM commands c WHERE c.imei1 = d.imei1 AND c.state_key = e.key
          AND c.status IN ('QUEUED', 'SENT', 'DELIVERED', 'EXECUTED')) AS latest
      FROM devices d CROSS JOIN LATERAL jsonb_each(d.desired_cause) e`.execute(database.db);
    expect(result.rows.length).toBeGreaterThan(0);
    const problems = result.rows
      .filter((r) => r.latest !== null && ms(r.at) !== ms(r.latest))
      .map((r) => `${r.imei1} ${r.key}: decided ${r.at}, its command issued ${ms(r.latest as Date)}`);
    expect(problems).toEqual([]);
  });
});
