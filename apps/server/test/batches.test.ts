/**
 * Durable server-side batches: upload, validation, chunked processing with exact counts, the resume
 * flow, sharing between instances, and the legacy per-IMEI calls.
 */
import { MESSAGES } from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { BatchWorker } from '../src/modules/batches/worker';
import { databaseKinds, type TestDatabase } from './db';
import { deviceSuite, simulatedDevice } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

/** Registers devices straight in the database (fast, for batch sizes a fleet would take long to register). */
async function seedDevices(database: TestDatabase, imeis: string[]): Promise<void> {
  for (let i = 0; i < imeis.length; i += 1000) {
    await database.db
      .insertInto('devices')
      .values(imeis.slice(i, i + 1000).map((imei1) => ({ imei1, imei2: null, match_status: 'YES' as const })))
      .execute();
  }
}

const randomImeis = (n: number) => {
  const seed = Math.floor(Math.random() * 1000);
  const base = Math.floor(Math.random() * 100_000_000) * 10;
  return Array.from({ length: n }, (_, i) => imeiFor(seed, base + i));
};

describe.each(databaseKinds())('batches on %s', (kind) => {
  const suite = deviceSuite(kind, { batchWorkers: 2 });
  const { devices } = suite;

  const upload = (
    script: string,
    content: string,
    options: { token?: string; name?: string; type?: string; fields?: Record<string, string> } = {},
  ) => {
    const body = multipart(options.fields ?? { user: suite.admin.email }, {
      name: options.name ?? 'devices.csv',
      type: options.type ?? 'text/csv',
      content,
    });
    return suite.server.app.inject({
      method: 'POST',
      url: `/api/${script}.php`,
      headers: { ...body.headers, 'x-api-key': options.token ?? suite.admin.token },
      payload: body.payload,
    });
  };
  const call = (url: string, payload: object, token = suite.admin.token) =>
    suite.server.app.inject({ method: 'POST', url: `/api/${url}`, headers: { 'x-api-key': token }, payload });
  const progress = async (batchId: number) => (await call('v2/batch/progress', { batchId })).json().batch;
  const waitComplete = (batchId: number, timeout = 60_000) =>
    vi.waitFor(async () => expect((await progress(batchId)).isComplete).toBe('complete'), {
      timeout,
      interval: 100,
    });

  it('runs an uploaded batch on the server: found devices get the command (interface B), unknown IMEIs are not found', async () => {
    const online = [simulatedDevice(suite.server), simulatedDevice(suite.server)];
    devices.push(...online);
    for (const device of online) {
      await device.register();
      await device.connect();
    }
    const registered = randomImeis(120);
    await seedDevices(suite.database, registered);
    const unknown = randomImeis(30);
    const list = [...online.map((d) => d.imei), ...registered, ...unknown];
    const response = await upload('bulkLockCopy', imeiCsv(list));
    expect(response.statusCode).toBe(200);
    const { batchId, total } = response.json();
    expect(total).toBe(list.length);
    await waitComplete(batchId);
    const done = await progress(batchId);
    expect(done).toMatchObject({
      statusOf: 'lockfiles',
      batchfilename: 'devices.csv',
      total: 152,
      valid: 152,
      invalid: 0,
      found: 122,
      notFound: 30,
      processed: 152,
      lastimei: unknown.at(-1),
    });
    const commands = await suite.database.db
      .selectFrom('commands')
      .select(['imei1', 'interface', 'command'])
      .where('batch_id', '=', batchId)
      .execute();
    expect(commands).toHaveLength(122);
    expect(new Set(commands.map((c) => c.imei1)).size).toBe(122);
    expect(commands.every((c) => c.interface === 'B' && c.command === 'LOCK')).toBe(true);
    for (const device of online) await vi.waitFor(() => expect(device.state.locked).toBe(true));
    const results = (await call('v2/batch/results', { batchId, offset: 0, limit: 1000 })).json();
    expect(results.items).toHaveLength(152);
    expect(results.items.at(-1)).toMatchObject({ sno: 152, imei: unknown.at(-1), validate: 'not found' });
    expect(results.items[0]).toMatchObject({ sno: 1, validate: 'found' });
  });

  it('validates the file again on the server with the spec messages and stores nothing on a refusal', async () => {
    const before = await suite.database.db
      .selectFrom('batches')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    const bad = await upload('bulkUnlockCopy', 'Sno,IMEI1\n1,123\n2,123456789012345,9\n');
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ status: 'error', message: MESSAGES.csvIncorrect });
    expect(bad.json().invalid).toEqual([
      { line: 2, error: MESSAGES.invalidImeiLength, data: '1,123' },
      { line: 3, error: MESSAGES.moreThanTwoColumns, data: '2,123456789012345,9' },
    ]);
    const headers = await upload('bulkUnlockCopy', 'no,imei\n1,123456789012345\n');
    expect(headers.json().invalid).toEqual([
      { line: 1, error: MESSAGES.invalidHeaders, data: MESSAGES.headersNotMatched },
    ]);
    const notCsv = await upload('bulkUnlockCopy', 'PK\u0003\u0004binary', {
      name: 'devices.xlsx',
      type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    });
    expect(notCsv.statusCode).toBe(415);
    expect(notCsv.json().message).toBe(MESSAGES.onlyCsv);
    const after = await suite.database.db
      .selectFrom('batches')
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    const empty = await upload('bulkUnlockCopy', 'Sno,IMEI1\r\n\r\n');
    expect(empty.json()).toMatchObject({ status: 'success', batchId: null, total: 0 });
    expect(empty.json().message).toMatch(/no data rows/);
  });

  it('refuses a USER without the screen permission and a form naming someone else', async () => {
    const user = await loginAs(
      suite.server.app,
      await buildUser(suite.database, { permissions: ['unlockDevice'] }),
    );
    const refused = await upload('bulkLockCopy', imeiCsv(randomImeis(2)), {
      token: user.token,
      fields: { user: user.email },
    });
    expect(refused.statusCode).toBe(403);
    const other = await upload('bulkLockCopy', imeiCsv(randomImeis(2)), {
      fields: { user: 'someone@lendlock.com' },
    });
    expect(other.statusCode).toBe(403);
  });

  it('grey batches carry the grade; paused batches wait and resume exactly where they stopped', async () => {
    const imeis = randomImeis(400);
    await seedDevices(suite.database, imeis);
    // Workers held while the batch is stored and paused, so the pause lands before any chunk.
    await suite.server.app.ctx.batchWorker.stop();
    const response = await upload('bulkGreyCopy', imeiCsv(imeis), {
      fields: { user: suite.admin.email, level: 'level2' },
    });
    const { batchId } = response.json();
    await call('v2/batch/pause', { batchId });
    suite.server.app.ctx.batchWorker.start();
    // A chunk already under way finishes; after that nothing moves. Barrier: worker rounds taken after the
    // pause, run here until one finds nothing to do (a runnable batch would be worked through first).
    const idle = async () => {
      while (await suite.server.app.ctx.batchWorker.step()) {}
    };
    await idle();
    const paused = await progress(batchId);
    expect(paused.phase).toBe('paused');
    const current = (await call('v2/batch/current', { statusOf: 'disableappfiles' })).json().batch;
    expect(current.batchId).toBe(batchId);
    await idle();
    const stillPaused = await progress(batchId);
    expect(stillPaused.processed).toBe(paused.processed);
    await call('v2/batch/resume', { batchId });
    await waitComplete(batchId);
    const commands = await suite.database.db
      .selectFrom('commands')
      .select(['imei1', 'options'])
      .where('batch_id', '=', batchId)
      .execute();
    expect(commands).toHaveLength(400);
    expect(new Set(commands.map((c) => c.imei1)).size).toBe(400);
    expect(commands.every((c) => c.options.level === 'level2')).toBe(true);
  });

  it('runs a Notify batch: each row carries its generated header and message to the device', async () => {
    const device = simulatedDevice(suite.server);
    devices.push(device);
    await device.register();
    await device.connect();
    const [unknown] = randomImeis(1);
    const csv = `sno,name,imei1,amount,date,template\r\n1,Asha,${device.imei},1499.50,05/12/2030,Pre\r\n2,Ravi,${unknown},200,01/01/2020,Post\r\n`;
    const response = await upload('bulkNotifyCopy', csv, { name: 'reminders.csv' });
    expect(response.statusCode).toBe(200);
    const { batchId } = response.json();
    await waitComplete(batchId);
    expect(await progress(batchId)).toMatchObject({ statusOf: 'notifyfiles', found: 1, notFound: 1 });
    const results = (await call('v2/batch/results', { batchId })).json().items;
    expect(results[0]).toMatchObject({
      name: 'Asha',
      amount: '1499.50',
      template: 'Pre',
      header: 'Payment Reminder',
      validate: 'found',
    });
    expect(results[1]).toMatchObject({ name: 'Ravi', header: 'Payment Overdue', validate: 'not found' });
    await vi.waitFor(() => expect(device.received.at(-1)?.command).toBe('NOTIFY'));
    expect(device.received.at(-1)?.options).toEqual({ message: results[0].notification, caseType: 'Pre' });
    const bad = await upload('bulkNotifyCopy', 'sno,name,imei1,amount,date,template\n1,A,1,x,y,z\n');
    expect(bad.json().invalid[0].error).toMatch(/^Incorrect fields: /);
  });

  it('New Batch discards the rest of a batch', async () => {
    const imeis = randomImeis(300);
    await suite.server.app.ctx.batchWorker.stop();
    const { batchId } = (await upload('bulkSetAlarmCopy', imeiCsv(imeis))).json();
    const cancelled = (await call('v2/batch/cancel', { batchId })).json().batch;
    suite.server.app.ctx.batchWorker.start();
    expect(cancelled.isComplete).toBe('cancelled');
    expect((await call('v2/batch/current', { statusOf: 'activatealarmfiles' })).json().batch).toBeNull();
    // The rest is gone: no chunk left to process, no row processed, no command.
    const left = await sql<{ chunks: number; items: number; commands: number }>`
      SELECT (SELECT count(*)::int FROM batch_chunks WHERE batch_id = ${batchId}) AS chunks,
             (SELECT count(*)::int FROM batch_items WHERE batch_id = ${batchId}) AS items,
             (SELECT count(*)::int FROM commands WHERE batch_id = ${batchId}) AS commands`.execute(
      suite.database.db,
    );
    expect(left.rows[0]).toEqual({ chunks: 0, items: 0, commands: 0 });
  });

  it('a batch, its rows and its audit row commit together: a row or an audit row refused leaves nothing', async () => {
    const admin = await suite.database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', suite.admin.email)
      .executeTakeFirstOrThrow();
    const store = (fileName: string, rows: { imei: string }[][]) =>
      suite.server.app.ctx.batches.create(
        {
          feature: 'lockdevicefiles',
          command: 'LOCK',
          options: {},
          fileName,
          storedFile: `lockdevicefiles/${fileName}`,
          iface: 'B',
          actor: {
            credential: 'session',
            userId: admin.id,
            email: suite.admin.email,
            userlevel: 'ADMIN',
            permissions: new Set(),
            retailerPhone: null,
          },
          address: '127.0.0.1',
          total: rows.flat().length,
          invalid: 0,
        },
        rows,
      );
    const left = async (fileName: string) => {
      const found = await sql<{ batches: number; chunks: number; audited: number }>`
        SELECT (SELECT count(*)::int FROM batches WHERE file_name = ${fileName}) AS batches,
               (SELECT count(*)::int FROM batch_chunks c JOIN batches b ON b.id = c.batch_id
                 WHERE b.file_name = ${fileName}) AS chunks,
               (SELECT count(*)::int FROM audit_log WHERE action = 'batch.LOCK'
                 AND details ->> 'file' = ${fileName}) AS audited`.execute(suite.database.db);
      return found.rows[0];
    };
    const imeis = randomImeis(25_000);
    await seedDevices(suite.database, imeis.slice(0, 100));
    const rows = imeis.map((imei) => ({ imei }));
    // A row the table refuses (no IMEI) in the third slice: the slices before it were written by then.
    rows[22_000] = { imei: undefined as unknown as string };
    await expect(store('rows-refused.csv', [rows.slice(0, 5000), rows.slice(5000)])).rejects.toThrow();
    expect(await left('rows-refused.csv')).toEqual({ batches: 0, chunks: 0, audited: 0 });

    // The audit log refuses the batch's row (a trigger of the tables' owner, for this file only): the
    // batch and its rows, written before it, are gone with it.
    const asOwner = (statement: ReturnType<typeof sql>) =>
      suite.database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        await statement.execute(trx);
      });
    await asOwner(sql`CREATE FUNCTION refuse_batch_audit() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.details ->> 'file' = 'audit-refused.csv' THEN RAISE EXCEPTION 'audit row refused'; END IF;
        RETURN NEW;
      END $$`);
    await asOwner(sql`CREATE TRIGGER refuse_batch_audit BEFORE INSERT ON audit_log
      FOR EACH ROW EXECUTE FUNCTION refuse_batch_audit()`);
    try {
      const valid = imeis.slice(0, 100).map((imei) => ({ imei }));
      await expect(store('audit-refused.csv', [valid])).rejects.toThrow(/audit row refused/);
      expect(await left('audit-refused.csv')).toEqual({ batches: 0, chunks: 0, audited: 0 });
      // The same rows under another name: the batch, its rows and its audit row are all there.
      const id = await store('audit-accepted.csv', [valid]);
      expect(await left('audit-accepted.csv')).toEqual({
        batches: 1,
        chunks: expect.any(Number),
        audited: 1,
      });
      await waitComplete(id);
    } finally {
      await asOwner(sql`DROP TRIGGER refuse_batch_audit ON audit_log`);
      await asOwner(sql`DROP FUNCTION refuse_batch_audit()`);
    }
  });

  it('two instances on one database share a batch with no IMEI processed twice', async () => {
    const imeis = randomImeis(1500);
    await seedDevices(suite.database, imeis);
    const { batchId } = (await upload('bulkBlockCopy', imeiCsv(imeis))).json();
    // A second instance's workers join the same batch.
    const second = new BatchWorker({
      db: suite.database.db,
      commands: suite.server.app.ctx.commands,
      log: suite.server.app.log,
      oneShotTtlMs: 1000,
      workers: 2,
    });
    second.start();
    try {
      await waitComplete(batchId);
    } finally {
      await second.stop();
    }
    const stats = await sql<{ n: number; distinct_imeis: number }>`
      SELECT count(*)::int AS n, count(DISTINCT imei1)::int AS distinct_imeis FROM commands WHERE batch_id = ${batchId}`.execute(
      suite.database.db,
    );
    expect(stats.rows[0]).toEqual({ n: 1500, distinct_imeis: 1500 });
    const items = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM batch_chunks WHERE batch_id = ${batchId}`.execute(suite.database.db);
    expect(items.rows[0]?.n).toBe(0);
    const results = await sql<{ n: number; seqs: number }>`
      SELECT count(*)::int AS n, count(DISTINCT seq)::int AS seqs FROM batch_items WHERE batch_id = ${batchId}`.execute(
      suite.database.db,
    );
    expect(results.rows[0]).toEqual({ n: 1500, seqs: 1500 });
  });

  it('a lease that lapsed while its instance could not reach the database is picked up by that instance; a graceful stop leaves the batch to the others', async () => {
    const imeis = randomImeis(300);
    await seedDevices(suite.database, imeis);
    await suite.server.app.ctx.batchWorker.stop();
    const instance = () =>
      new BatchWorker({
        db: suite.database.db,
        commands: suite.server.app.ctx.commands,
        log: suite.server.app.log,
        oneShotTtlMs: 1000,
      });
    const [first, second] = [instance(), instance()];
    try {
      const { batchId } = (await upload('bulkSetAlarmCopy', imeiCsv(imeis))).json();
      expect(await first.step()).toBe(true);
      expect((await progress(batchId)).processed).toBe(50);
      // The suite.database was out of reach for longer than the lease: the batch shows as interrupted, and
      // another instance leaves it to the operator.
      await sql`UPDATE batches SET lease_until = now() - interval '1 minute' WHERE id = ${batchId}`.execute(
        suite.database.db,
      );
      expect((await progress(batchId)).phase).toBe('interrupted');
      expect(await second.step()).toBe(false);
      // The instance that held it goes on where it stopped.
      expect(await first.step()).toBe(true);
      expect(await progress(batchId)).toMatchObject({ phase: 'running', processed: 100 });
      // A graceful stop keeps the lease: another instance working on the batch goes on with it.
      await first.stop();
      expect((await progress(batchId)).phase).toBe('running');
      expect(await second.step()).toBe(true);
      expect((await progress(batchId)).processed).toBe(150);
      await second.stop();
      // With no instance left, the lease lapses and the operator resumes the batch (Process).
      await sql`UPDATE batches SET lease_until = now() - interval '1 second' WHERE id = ${batchId}`.execute(
        suite.database.db,
      );
      expect((await progress(batchId)).phase).toBe('interrupted');
      await call('v2/batch/resume', { batchId });
      suite.server.app.ctx.batchWorker.start();
      await waitComplete(batchId);
      const stats = await sql<{ n: number; distinct_imeis: number }>`
        SELECT count(*)::int AS n, count(DISTINCT imei1)::int AS distinct_imeis FROM commands WHERE batch_id = ${batchId}`.execute(
        suite.database.db,
      );
      expect(stats.rows[0]).toEqual({ n: 300, distinct_imeis: 300 });
    } finally {
      await first.stop();
      await second.stop();
      suite.server.app.ctx.batchWorker.start();
    }
  });

  it('serves the legacy per-IMEI loop: getimeidetails, updateStatusOnServer, updateCommandOnServer', async () => {
    const [known] = randomImeis(1);
    await seedDevices(suite.database, [known ?? '']);
    expect(
      (
        await call('getimeidetails.php', {
          imei: known,
          action: 'lock',
          filename: 'f.csv',
          user: suite.admin.email,
        })
      ).json(),
    ).toEqual({ message: 'found' });
    expect(
      (
        await call('getimeidetails.php', { imei: '123456789012345', action: 'lock', filename: 'f.csv' })
      ).json(),
    ).toEqual({ message: 'not found' });
    expect(
      (await call('getimeidetails.php', { imei: 'garbage', action: 'lock', filename: 'f.csv' })).json(),
    ).toEqual({ message: 'not found' });
    const row = await suite.database.db
      .selectFrom('commands')
      .select('interface')
      .where('imei1', '=', known ?? '')
      .executeTakeFirstOrThrow();
    expect(row.interface).toBe('B');
    const status = await call('updateStatusOnServer.php', {
      lastimei: known,
      fileName: 'f.csv',
      isComplete: 'incomplete',
      statusOf: 'lockfiles',
      user: suite.admin.email,
    });
    expect(status.json().status).toBe('success');
    await call('updateStatusOnServer.php', {
      lastimei: known,
      fileName: 'f.csv',
      isComplete: 'complete',
      statusOf: 'lockfiles',
    });
    const recorded = await suite.database.db
      .selectFrom('batches')
      .select(['status', 'last_imei'])
      .where('file_name', '=', 'f.csv')
      .execute();
    expect(recorded).toEqual([{ status: 'complete', last_imei: known }]);
    const list = await suite.server.app.inject({
      method: 'PUT',
      url: '/api/updateCommandOnServer.php',
      headers: { 'x-api-key': suite.admin.token },
      payload: { imeilist: `${known},${known}`, action: 'lock', user: suite.admin.email },
    });
    expect(list.json()).toEqual({ status: 'success', message: '2 IMEIs recorded' });
  });
});

describe.each(databaseKinds())('batch commands behind older queued ones on %s', (kind) => {
  // No sweep during the test: only the batch itself can send the older command.
  const suite = deviceSuite(kind, { batchWorkers: 1, dispatchIntervalMs: 3_600_000 });

  it('an online device with an older QUEUED command receives that one first, then the batch command', async () => {
    const device = simulatedDevice(suite.server);
    suite.devices.push(device);
    await device.register();
    await device.connect();
    // Online, and the dispatch that follows coming online done (it would send the command below).
    await vi.waitFor(
      async () =>
        expect(
          (
            await suite.database.db
              .selectFrom('devices')
              .select('online')
              .where('imei1', '=', device.imei)
              .executeTakeFirstOrThrow()
          ).online,
        ).toBe(true),
      { timeout: 10_000, interval: 20 },
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    // An older command the broker did not take (it went back to QUEUED), on another state key.
    const older = `older-${device.imei}`;
    await suite.database.db
      .insertInto('commands')
      .values({
        transaction_id: older,
        imei1: device.imei,
        command: 'BLOCKAPP',
        kind: 'state',
        state_key: 'appsBlocked',
        interface: 'A',
        status: 'QUEUED',
        user_label: suite.admin.email,
      })
      .execute();
    await sql`UPDATE devices SET desired_state = desired_state || '{"appsBlocked": true}'::jsonb
      WHERE imei1 = ${device.imei}`.execute(suite.database.db);
    const body = multipart(
      { user: suite.admin.email },
      { name: 'devices.csv', type: 'text/csv', content: imeiCsv([device.imei]) },
    );
    const response = await suite.server.app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': suite.admin.token },
      payload: body.payload,
    });
    expect(response.statusCode).toBe(200);
    await vi.waitFor(() => expect(device.received.map((c) => c.command)).toEqual(['BLOCKAPP', 'LOCK']), {
      timeout: 15_000,
      interval: 50,
    });
    await vi.waitFor(
      async () => {
        const rows = await suite.database.db
          .selectFrom('commands')
          .select(['command', 'status'])
          .where('imei1', '=', device.imei)
          .orderBy('id')
          .execute();
        expect(rows).toEqual([
          { command: 'BLOCKAPP', status: 'EXECUTED' },
          { command: 'LOCK', status: 'EXECUTED' },
        ]);
      },
      { timeout: 15_000, interval: 50 },
    );
    expect(device.state).toMatchObject({ locked: true, appsBlocked: true });
  });
});
