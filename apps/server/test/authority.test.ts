/**
 * Authority over batches when their owner loses standing (only the right person changes a
 * phone): a disabled user's, or a deactivated key's, batches pause at once with the
 * reason on the resume card and in the Reports history, and no command is issued for them after the
 * disable; a disable racing a chunk cannot let the chunk through after it commits; the rules of resume.
 *
 * The batch workers are stopped and chunks are run with `step()`, the worker's own step, so each test
 * knows exactly how many chunks ran before and after the change of standing.
 */
import type { Session } from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BATCH_AUTHORITY_MESSAGES, BATCH_PAUSE_REASONS } from '../src/modules/batches/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, startDeviceServer } from './devices';
import { buildUser, loginAs, type TestUser } from './factories';
import { imeiCsv, multipart } from './multipart';

/** 300 IMEIs: six chunks of 50 (chunkSizeFor). */
const BATCH_SIZE = 300;
const CHUNK = 50;

describe.each(databaseKinds())('batch authority on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let app: FastifyInstance;
  let admin: Session;
  let superadmin: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, 'embedded', { batchWorkers: 1 });
    app = server.app;
    // Chunks run only when a test calls step(): the test decides what runs before and after a disable.
    await app.ctx.batchWorker.stop();
    admin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    superadmin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  const call = (token: string, url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: { 'x-api-key': token }, payload });

  /** Registered devices, straight in the database (a few hundred agents would only slow the test). */
  const seedDevices = async (n: number) => {
    const seed = Math.floor(Math.random() * 1000);
    const base = Math.floor(Math.random() * 100_000_000) * 10;
    const imeis = Array.from({ length: n }, (_, i) => imeiFor(seed, base + i));
    await database.db
      .insertInto('devices')
      .values(imeis.map((imei1) => ({ imei1, imei2: null, match_status: 'YES' as const })))
      .execute();
    return imeis;
  };

  /** A USER allowed to run Disable Camera batches and read Reports. */
  const cameraUser = () =>
    buildUser(database, { permissions: ['disableCamera', 'reports', 'keyManagement'] });

  const uploadBatch = async (token: string, email: string, imeis: string[]) => {
    const body = multipart(
      { user: email },
      { name: 'cameras.csv', type: 'text/csv', content: imeiCsv(imeis) },
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/bulkDisableCameraCopy.php',
      headers: { ...body.headers, 'x-api-key': token },
      payload: body.payload,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().batchId as number;
  };

  const batchRow = (id: number) =>
    database.db.selectFrom('batches').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const commandsOf = (batchId: number) =>
    database.db
      .selectFrom('commands')
      .select(['id', 'user_id', 'key_id', 'created_at'])
      .where('batch_id', '=', batchId)
      .orderBy('id')
      .execute();
  const pauseAudits = (batchId: number) =>
    database.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'result', 'details'])
      .where('target', '=', `batch:${batchId}`)
      .where('action', '=', 'batch.pause')
      .execute();
  /** Runs `n` chunks of whatever batch is runnable, as the worker does. */
  const steps = async (n: number) => {
    const ran: boolean[] = [];
    for (let i = 0; i < n; i += 1) ran.push(await app.ctx.batchWorker.step());
    return ran;
  };
  const now = async () =>
    (await sql<{ t: Date }>`SELECT clock_timestamp() AS t`.execute(database.db)).rows[0]?.t as Date;
  const newKey = async (owner: TestUser, session: Session) => {
    const response = await call(session.token, '/keyapi/generate_key.php', {
      key_name: 'batches',
      password: owner.password,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { id: number; key: string };
  };

  it('disabling the owner mid-batch pauses it at once with the reason: no command after the disable, the reason on the resume card and in Reports', async () => {
    const imeis = await seedDevices(BATCH_SIZE);
    const owner = await cameraUser();
    const session = await loginAs(app, owner);
    const batchId = await uploadBatch(session.token, owner.email, imeis);
    expect(await steps(2)).toEqual([true, true]);
    expect(await commandsOf(batchId)).toHaveLength(2 * CHUNK);

    const disabled = await call(admin.token, '/api/updateUserStatus.php', {
      email: owner.email,
      status: 'INACTIVE',
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const afterDisable = await now();
    // Paused in the disable's own transaction, with the reason and an audit row naming who disabled.
    expect(await batchRow(batchId)).toMatchObject({
      status: 'incomplete',
      paused: true,
      paused_reason: BATCH_PAUSE_REASONS.ownerDisabled,
      processed: 2 * CHUNK,
    });
    const audits = await pauseAudits(batchId);
    expect(audits).toHaveLength(1);
    expect(audits[0]).toMatchObject({
      result: 'paused',
      details: { reason: BATCH_PAUSE_REASONS.ownerDisabled },
    });

    // The worker finds nothing to run: not one more command, none created after the disable.
    expect(await steps(3)).toEqual([false, false, false]);
    const commands = await commandsOf(batchId);
    expect(commands).toHaveLength(2 * CHUNK);
    expect(commands.filter((c) => new Date(c.created_at) > afterDisable)).toEqual([]);

    // The resume card (progress) and the Reports history say why.
    const progress = await call(admin.token, '/api/v2/batch/progress', { batchId });
    expect(progress.json().batch).toMatchObject({
      phase: 'paused',
      isComplete: 'incomplete',
      pausedReason: BATCH_PAUSE_REASONS.ownerDisabled,
      processed: 2 * CHUNK,
    });
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const report = await call(admin.token, '/api/downloadReports.php', {
      report: 'disablecamera',
      startdate: day(-1),
      enddate: day(1),
    });
    expect(report.statusCode, report.body).toBe(200);
    const row = report.json().items.find((item: { id: number }) => item.id === batchId);
    expect(row).toMatchObject({ isComplete: 'incomplete' });
    expect(row.remarks).toContain(BATCH_PAUSE_REASONS.ownerDisabled);
  });

  it('a disable that misses the pause call still stops the batch: the chunk checks the owner under lock', async () => {
    const imeis = await seedDevices(4 * CHUNK);
    const owner = await cameraUser();
    const session = await loginAs(app, owner);
    const batchId = await uploadBatch(session.token, owner.email, imeis);
    expect(await steps(1)).toEqual([true]);
    // Disabled behind the service's back (no pause call): the worker's own check is what stops the batch.
    await database.db
      .updateTable('users')
      .set({ userstatus: 'INACTIVE' })
      .where('id', '=', owner.id)
      .execute();
    expect(await steps(2)).toEqual([false, false]);
    expect(await commandsOf(batchId)).toHaveLength(CHUNK);
    expect(await batchRow(batchId)).toMatchObject({
      paused: true,
      paused_reason: BATCH_PAUSE_REASONS.ownerDisabled,
      processed: CHUNK,
    });
    expect(await pauseAudits(batchId)).toEqual([
      expect.objectContaining({ actor: 'system', result: 'paused' }),
    ]);
  });

  it('a chunk that starts while a disable is under way waits for it, then runs nothing', async () => {
    const imeis = await seedDevices(4 * CHUNK);
    const owner = await cameraUser();
    const session = await loginAs(app, owner);
    const batchId = await uploadBatch(session.token, owner.email, imeis);
    expect(await steps(1)).toEqual([true]);
    let chunk: Promise<boolean> | undefined;
    await database.db.transaction().execute(async (trx) => {
      // The disable, not yet committed (it holds the owner's row, as updateUserStatus does).
      await trx.updateTable('users').set({ userstatus: 'INACTIVE' }).where('id', '=', owner.id).execute();
      chunk = app.ctx.batchWorker.step();
      if (kind === 'postgres') {
        // The chunk is waiting for the owner's row (PGlite has one connection: it waits for the commit).
        await vi.waitFor(
          async () => {
            // As the test's superuser: the app's row-level-security role sees no other session's waits.
            const waiting = await database.db.transaction().execute(async (probe) => {
              await sql`SET LOCAL ROLE NONE`.execute(probe);
              return sql<{ n: number }>`
                SELECT count(*)::int AS n FROM pg_stat_activity
                WHERE datname = current_database() AND wait_event_type = 'Lock'`.execute(probe);
            });
            expect(waiting.rows[0]?.n).toBeGreaterThan(0);
          },
          { timeout: 10_000, interval: 20 },
        );
      }
    });
    expect(await chunk).toBe(false);
    expect(await commandsOf(batchId)).toHaveLength(CHUNK);
    expect(await batchRow(batchId)).toMatchObject({
      paused: true,
      paused_reason: BATCH_PAUSE_REASONS.ownerDisabled,
    });
  });

  it("deactivating the key that started a batch pauses it with the key's reason; the owner's other batches go on", async () => {
    const imeis = await seedDevices(4 * CHUNK);
    const owner = await cameraUser();
    const session = await loginAs(app, owner);
    const key = await newKey(owner, session);
    const byKey = await uploadBatch(key.key, owner.email, imeis.slice(0, 2 * CHUNK));
    expect((await batchRow(byKey)).key_id).toBe(key.id);
    expect(await steps(1)).toEqual([true]);
    const bySession = await uploadBatch(session.token, owner.email, imeis.slice(2 * CHUNK));

    const deactivated = await call(session.token, '/keyapi/keymanagement/update_key_status.php', {
      keyId: key.id,
      status: 'inactive',
    });
    expect(deactivated.statusCode, deactivated.body).toBe(200);
    const afterDeactivation = await now();
    expect(await batchRow(byKey)).toMatchObject({
      paused: true,
      paused_reason: BATCH_PAUSE_REASONS.keyDeactivated,
    });
    expect(await batchRow(bySession)).toMatchObject({ paused: false, paused_reason: null });
    // The session's batch runs to its end; the key's gets nothing more.
    expect(await steps(3)).toEqual([true, true, false]);
    expect(await commandsOf(bySession)).toHaveLength(2 * CHUNK);
    const keyCommands = await commandsOf(byKey);
    expect(keyCommands).toHaveLength(CHUNK);
    expect(keyCommands.filter((c) => new Date(c.created_at) > afterDeactivation)).toEqual([]);
    const progress = await call(session.token, '/api/v2/batch/progress', { batchId: byKey });
    expect(progress.json().batch).toMatchObject({
      phase: 'paused',
      pausedReason: BATCH_PAUSE_REASONS.keyDeactivated,
    });

    // The owner, in good standing, resumes it by session: it goes on under the session, not the key.
    const resumed = await call(session.token, '/api/v2/batch/resume', { batchId: byKey });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json().batch).toMatchObject({ pausedReason: null });
    expect(await steps(2)).toEqual([true, false]);
    const after = await commandsOf(byKey);
    expect(after).toHaveLength(2 * CHUNK);
    expect(after.slice(CHUNK).every((c) => c.user_id === owner.id && c.key_id === null)).toBe(true);
  });

  it('resume of a batch paused by a disable: a higher level (it runs on under them), or the owner once re-enabled; never a peer or a USER', async () => {
    const imeis = await seedDevices(6 * CHUNK);
    const owner = await cameraUser();
    const ownerSession = await loginAs(app, owner);
    const peer = await loginAs(app, await cameraUser());
    const first = await uploadBatch(ownerSession.token, owner.email, imeis.slice(0, 3 * CHUNK));
    const second = await uploadBatch(ownerSession.token, owner.email, imeis.slice(3 * CHUNK));
    await call(admin.token, '/api/updateUserStatus.php', { email: owner.email, status: 'INACTIVE' });
    expect(await steps(1)).toEqual([false]);

    // Another USER: refused, nothing changes.
    const before = await batchRow(first);
    const refused = await call(peer.token, '/api/v2/batch/resume', { batchId: first });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(BATCH_AUTHORITY_MESSAGES.notYours);
    expect(await batchRow(first)).toEqual(before);

    // An ADMIN resumes the first: it runs on under the ADMIN, as the audit row says.
    const adminUser = await database.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', admin.email)
      .executeTakeFirstOrThrow();
    const resumed = await call(admin.token, '/api/v2/batch/resume', { batchId: first });
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json().batch).toMatchObject({ phase: 'running', pausedReason: null });
    expect(await steps(4)).toEqual([true, true, true, false]);
    const commands = await commandsOf(first);
    expect(commands).toHaveLength(3 * CHUNK);
    expect(commands.every((c) => c.user_id === adminUser.id)).toBe(true);
    const resumeAudits = await database.db
      .selectFrom('audit_log')
      .select(['actor', 'result', 'details'])
      .where('target', '=', `batch:${first}`)
      .where('action', '=', 'batch.resume')
      .orderBy('id')
      .execute();
    // The USER's refused attempt, then the ADMIN's resume.
    expect(resumeAudits.map((a) => [a.actor, a.result])).toEqual([
      [peer.email, 'refused'],
      [admin.email, 'resumed'],
    ]);
    const resumeAudit = resumeAudits[1];
    expect(resumeAudit).toMatchObject({
      actor: admin.email,
      result: 'resumed',
      details: { pausedReason: BATCH_PAUSE_REASONS.ownerDisabled, owner: { userId: owner.id } },
    });

    // The owner, re-enabled, resumes the second under their own name.
    await call(admin.token, '/api/updateUserStatus.php', { email: owner.email, status: 'ACTIVE' });
    const again = await loginAs(app, owner);
    const own = await call(again.token, '/api/v2/batch/resume', { batchId: second });
    expect(own.statusCode, own.body).toBe(200);
    expect(await steps(4)).toEqual([true, true, true, false]);
    expect((await commandsOf(second)).every((c) => c.user_id === owner.id)).toBe(true);
  });

  it("an ADMIN's batch paused by a disable: another ADMIN cannot resume or discard it, a SUPERADMIN can", async () => {
    const imeis = await seedDevices(CHUNK);
    const ownerAdmin = await buildUser(database, { userlevel: 'ADMIN' });
    const ownerSession = await loginAs(app, ownerAdmin);
    const batchId = await uploadBatch(ownerSession.token, ownerAdmin.email, imeis);
    const disabled = await call(superadmin.token, '/api/updateUserStatus.php', {
      email: ownerAdmin.email,
      status: 'INACTIVE',
    });
    expect(disabled.statusCode, disabled.body).toBe(200);
    const before = await batchRow(batchId);
    for (const action of ['resume', 'cancel']) {
      const refused = await call(admin.token, `/api/v2/batch/${action}`, { batchId });
      expect({ action, status: refused.statusCode, message: refused.json().message }).toEqual({
        action,
        status: 403,
        message: BATCH_AUTHORITY_MESSAGES.notYours,
      });
    }
    expect(await batchRow(batchId)).toEqual(before);
    const discarded = await call(superadmin.token, '/api/v2/batch/cancel', { batchId });
    expect(discarded.statusCode, discarded.body).toBe(200);
    expect(discarded.json().batch).toMatchObject({ isComplete: 'cancelled', pausedReason: null });
    expect(await commandsOf(batchId)).toEqual([]);
  });
});
