/**
 * Single commands that arrive together are recorded together (CommandService.issue): fewer transactions
 * than commands, and for each command the same outcome as on its own: its own transaction id, audit row
 * and acknowledgement; not found, released and de-enrolled devices refused with their messages; two
 * commands for one device both recorded in order. A device held by another transaction (a batch chunk)
 * holds up only its own command.
 */
import { COMMAND_DEFINITIONS } from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { COMMAND_MESSAGES } from '../src/modules/commands/service';
import { databaseKinds } from './db';
import { deviceSuite, randomProfile, simulatedDevice } from './devices';

const actionOf = (raw: string) =>
  COMMAND_DEFINITIONS.find((d) => d.raw === raw && d.single)?.action as string;

describe.each(databaseKinds())('single commands arriving together on %s', (kind) => {
  const suite = deviceSuite(kind);
  const { devices } = suite;

  const onlineDevices = async (n: number) => {
    const fleet = Array.from({ length: n }, () => simulatedDevice(suite.server));
    devices.push(...fleet);
    for (const device of fleet) await device.register();
    await Promise.all(fleet.map((d) => d.connect()));
    await vi.waitFor(
      async () => {
        const online = await suite.database.db
          .selectFrom('devices')
          .select(sql<number>`count(*)::int`.as('n'))
          .where(
            'imei1',
            'in',
            fleet.map((d) => d.imei),
          )
          .where('online', '=', true)
          .executeTakeFirstOrThrow();
        expect(Number(online.n)).toBe(n);
      },
      { timeout: 10_000 },
    );
    return fleet;
  };
  const send = (imei: string, raw: string) =>
    suite.server.app.inject({
      method: 'POST',
      url: '/api/locknotification.php',
      headers: { 'x-api-key': suite.admin.token },
      payload: { imei, action: actionOf(raw), user: suite.admin.email },
    });
  const commandOf = (transactionId: string) =>
    suite.database.db
      .selectFrom('commands')
      .selectAll()
      .where('transaction_id', '=', transactionId)
      .executeTakeFirst();

  it('each command has its own outcome, audit row and acknowledgement, in fewer transactions', async () => {
    const fleet = await onlineDevices(24);
    const [released, formatted, twice, ...others] = fleet as [
      SimulatedDevice,
      SimulatedDevice,
      SimulatedDevice,
      ...SimulatedDevice[],
    ];
    // A released device and a de-enrolled (formatted) one, each on its own first.
    const release = await send(released.imei, 'RELEASE');
    expect(release.statusCode).toBe(200);
    await vi.waitFor(
      async () => expect((await commandOf(release.json().transactionId))?.status).toBe('EXECUTED'),
      {
        timeout: 8000,
      },
    );
    const format = await suite.server.app.inject({
      method: 'POST',
      url: '/api/formattedDevice.php',
      headers: { 'x-api-key': suite.admin.token },
      payload: { imei: formatted.imei, user: suite.admin.email },
    });
    expect(format.statusCode).toBe(200);

    const unknown = randomProfile().imei1;
    const requests: [string, string][] = [
      ...others.map((d) => [d.imei, 'LOCK'] as [string, string]),
      [unknown, 'LOCK'],
      [released.imei, 'LOCK'],
      [formatted.imei, 'LOCK'],
      [twice.imei, 'LOCK'],
      [twice.imei, 'UNLOCK'],
    ];
    const responses = await Promise.all(requests.map(([imei, raw]) => send(imei, raw)));

    const byImei = (imei: string) => responses.filter((_, i) => requests[i]?.[0] === imei);
    expect(byImei(unknown).map((r) => [r.statusCode, r.json().message])).toEqual([
      [404, COMMAND_MESSAGES.notRegistered],
    ]);
    expect(byImei(released.imei).map((r) => [r.statusCode, r.json().message])).toEqual([
      [409, COMMAND_MESSAGES.released],
    ]);
    expect(byImei(formatted.imei).map((r) => [r.statusCode, r.json().message])).toEqual([
      [409, COMMAND_MESSAGES.deenrolled],
    ]);
    const accepted = responses
      .filter((r) => r.statusCode === 200)
      .map((r) => r.json().transactionId as string);
    expect(accepted).toHaveLength(others.length + 2);
    expect(new Set(accepted).size).toBe(accepted.length);
    // Recorded together: commands of one transaction share its start time, now(). On PostgreSQL the
    // requests reach the service while earlier groups run; PGlite answers one query at a time, so its
    // requests arrive one by one (each after its session check) and groups stay small.
    const groups = await sql<{ n: number }>`
      SELECT count(DISTINCT created_at)::int AS n FROM commands WHERE transaction_id = ANY(${accepted}::text[])`.execute(
      suite.database.db,
    );
    if (kind === 'postgres') expect(Number(groups.rows[0]?.n)).toBeLessThanOrEqual(accepted.length / 2);

    // Every accepted command: one row, one audit row, executed by its own device.
    const audit = await sql<{ tid: string; actor: string; target: string }>`
      SELECT details->>'transactionId' AS tid, actor, target FROM audit_log
      WHERE details->>'transactionId' = ANY(${accepted}::text[])`.execute(suite.database.db);
    expect(audit.rows.map((r) => r.tid).sort()).toEqual([...accepted].sort());
    expect(new Set(audit.rows.map((r) => r.actor))).toEqual(new Set([suite.admin.email]));
    await vi.waitFor(
      async () => {
        const rows = await suite.database.db
          .selectFrom('commands')
          .select(['transaction_id', 'imei1', 'status'])
          .where('transaction_id', 'in', accepted)
          .execute();
        expect(rows.filter((r) => r.status === 'EXECUTED')).toHaveLength(accepted.length);
      },
      { timeout: 10_000 },
    );
    for (const device of others) {
      expect(device.state.locked).toBe(true);
      expect(device.received.map((c) => c.command)).toEqual(['LOCK']);
    }
    // The two commands for one device: both recorded and executed, in the order of their ids; the device
    // ends as the later one leaves it, and the server wants the same.
    const pair = await suite.database.db
      .selectFrom('commands')
      .select(['command', 'status'])
      .where('imei1', '=', twice.imei)
      .orderBy('id')
      .execute();
    expect(pair.map((c) => c.status)).toEqual(['EXECUTED', 'EXECUTED']);
    expect(twice.received.map((c) => c.command)).toEqual(pair.map((c) => c.command));
    const wanted = await suite.database.db
      .selectFrom('devices')
      .select('desired_state')
      .where('imei1', '=', twice.imei)
      .executeTakeFirstOrThrow();
    expect(twice.state.locked).toBe(pair.at(-1)?.command === 'LOCK');
    expect((wanted.desired_state as { locked?: boolean }).locked ?? false).toBe(twice.state.locked);
    // The refused ones stored nothing.
    const refused = await suite.database.db
      .selectFrom('commands')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('imei1', 'in', [unknown, released.imei, formatted.imei])
      .where('command', '=', 'LOCK')
      .executeTakeFirstOrThrow();
    expect(Number(refused.n)).toBe(0);
  });

  it.runIf(kind === 'postgres')(
    'a device held by another transaction holds up only its own command',
    async () => {
      const [held, free] = (await onlineDevices(2)) as [SimulatedDevice, SimulatedDevice];
      let release!: () => void;
      const holding = new Promise<void>((resolve) => {
        release = resolve;
      });
      let locked!: () => void;
      const isLocked = new Promise<void>((resolve) => {
        locked = resolve;
      });
      // Another transaction (as a batch chunk would) holds the first device.
      const blocker = suite.database.db.transaction().execute(async (trx) => {
        await sql`SELECT 1 FROM devices WHERE imei1 = ${held.imei} FOR UPDATE`.execute(trx);
        locked();
        await holding;
      });
      await isLocked;
      let heldAnswered = false;
      const heldResponse = send(held.imei, 'LOCK').then((r) => {
        heldAnswered = true;
        return r;
      });
      const freeResponse = await send(free.imei, 'LOCK');
      expect(freeResponse.statusCode).toBe(200);
      expect(heldAnswered).toBe(false);
      await vi.waitFor(() => expect(free.state.locked).toBe(true), { timeout: 8000 });
      expect(heldAnswered).toBe(false);
      release();
      await blocker;
      const answered = await heldResponse;
      expect(answered.statusCode).toBe(200);
      await vi.waitFor(() => expect(held.state.locked).toBe(true), { timeout: 8000 });
    },
  );
});
