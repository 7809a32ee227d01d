/**
 * The tenant rules of devices, commands, batches, files and audit
 * (docs/tenancy.md): every object is decided by its resource's policy (authz/resources/).
 *
 * - 7: a command's status by transaction id answers only who may see it: a USER without permission, or
 *   another tenant's user, hears exactly what an unknown id gets.
 * - 6: a batch's uploaded file is served only to who may read the batch, with the answer `batch/results`
 *   gives them; stored names are random; the Reports history links only the files the user may read.
 * - A retailer's ADMIN reaches none of the lender's commands, batches, devices or audit rows.
 *
 * Every refusal leaves the database as it was.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MESSAGES, type Session } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BATCH_AUTHORITY_MESSAGES } from '../src/modules/batches/service';
import { COMMAND_MESSAGES } from '../src/modules/commands/messages';
import { ENROLLMENT_SECRET_MESSAGES } from '../src/modules/enrollment/service';
import { UPLOAD_LINK_MESSAGES } from '../src/modules/uploads/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, registerProfile, startDeviceServer } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

describe.each(databaseKinds())('tenant objects on %s', (kind) => {
  const OURS = '9555555555';
  let database: TestDatabase;
  let server: DeviceServer;
  let dataDir: string;
  /** The lender's users. */
  let superadmin: Session;
  let admin: Session;
  /** A USER with Reports only; a USER with no permission at all; a USER who runs Disable Camera. */
  let reporter: Session;
  let nobody: Session;
  let cameraUser: Session;
  /** A retailer's ADMIN and SUPERADMIN. */
  let rAdmin: Session;
  let rSuper: Session;
  /** A device of the lender (no retailer) and one of the retailer, both offline. */
  let lenders: string;
  let retailers: string;
  /** A QUEUED command on the lender's device, by the SUPERADMIN. */
  let command: string;
  /** Disable Camera batches of the SUPERADMIN and of the camera USER, and their stored files. */
  let superBatch: number;
  let superFile: string;
  let userBatch: number;
  let userFile: string;

  const call = (token: string, method: 'GET' | 'POST', url: string, payload?: object) =>
    server.app.inject({ method, url, headers: { 'x-api-key': token }, ...(payload ? { payload } : {}) });
  const answer = (response: { statusCode: number; json(): unknown }) => ({
    status: response.statusCode,
    body: response.json(),
  });
  /** Everything a refused call could change. */
  const state = async () => {
    const row = await sql<{ s: string }>`SELECT concat_ws('/',
      (SELECT md5(string_agg(d::text, '|' ORDER BY d.imei1)) FROM devices d),
      (SELECT md5(string_agg(c::text, '|' ORDER BY c.id)) FROM commands c),
      (SELECT md5(string_agg(b::text, '|' ORDER BY b.id)) FROM (SELECT id, status, paused, last_imei, user_id,
        file_removed_at FROM batches) b),
      (SELECT count(*) FROM enrollment_secrets)) AS s`.execute(database.db);
    return row.rows[0]?.s;
  };
  const register = async (retailer: string | null) => {
    const { profile, statusCode } = await registerProfile(server.app, { retailer_phone: retailer });
    expect(statusCode).toBe(200);
    return profile.imei1;
  };
  const upload = async (session: Session, imeis: string[]) => {
    const body = multipart({}, { name: 'cameras.csv', type: 'text/csv', content: imeiCsv(imeis) });
    const response = await server.app.inject({
      method: 'POST',
      url: '/api/bulkDisableCameraCopy.php',
      headers: { ...body.headers, 'x-api-key': session.token },
      payload: body.payload,
    });
    expect(response.statusCode, response.body).toBe(200);
    const batchId = response.json().batchId as number;
    const row = await database.db
      .selectFrom('batches')
      .select('stored_file')
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();
    return { batchId, file: row.stored_file ?? '' };
  };
  const download = (session: Session, file: string) => call(session.token, 'GET', `/api/v2/uploads/${file}`);
  const results = (session: Session, batchId: number) =>
    call(session.token, 'POST', '/api/v2/batch/results', { batchId, offset: 0, limit: 100 });

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'lendlock-objects-'));
    server = await startDeviceServer(database, 'embedded', { dataDir });
    const login = async (overrides: Parameters<typeof buildUser>[1]) =>
      loginAs(server.app, await buildUser(database, overrides));
    superadmin = await login({ userlevel: 'SUPERADMIN' });
    admin = await login({ userlevel: 'ADMIN' });
    reporter = await login({ permissions: ['reports'] });
    nobody = await login({ permissions: [] });
    cameraUser = await login({ permissions: ['disableCamera', 'reports'] });
    rAdmin = await login({ userlevel: 'ADMIN', retailerPhone: OURS });
    rSuper = await login({ userlevel: 'SUPERADMIN', retailerPhone: OURS });
    lenders = await register(null);
    retailers = await register(OURS);
    ({ batchId: superBatch, file: superFile } = await upload(superadmin, [lenders]));
    ({ batchId: userBatch, file: userFile } = await upload(cameraUser, [lenders]));
    for (const batchId of [superBatch, userBatch])
      await vi.waitFor(
        async () =>
          expect(
            (await call(superadmin.token, 'POST', '/api/v2/batch/progress', { batchId })).json(),
          ).toMatchObject({ batch: { isComplete: 'complete' } }),
        { timeout: 20_000 },
      );
    // After the batches, so that nothing supersedes it: it stays QUEUED (the device is offline).
    const issued = await call(superadmin.token, 'POST', '/api/locknotification.php', {
      imei: lenders,
      action: 'lock',
    });
    expect(issued.statusCode, issued.body).toBe(200);
    command = issued.json().transactionId;
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  // ---- Point 7: command status by id ----

  it("answers another's command to a USER without permission and a retailer's ADMIN as an unknown id", async () => {
    const before = await state();
    const unknown = answer(
      await call(nobody.token, 'POST', '/api/v2/commandStatus', { transactionId: 'no-such-transaction' }),
    );
    expect(unknown).toEqual({
      status: 404,
      body: { status: 'error', code: 'NOT_FOUND', message: COMMAND_MESSAGES.noSuchCommand },
    });
    for (const session of [nobody, rAdmin, rSuper]) {
      const response = await call(session.token, 'POST', '/api/v2/commandStatus', { transactionId: command });
      expect(answer(response)).toEqual(unknown);
      expect(response.body).not.toContain(lenders);
    }
    // Who may see it reads it: its issuer, and whoever may see the device's commands.
    for (const session of [superadmin, admin]) {
      const response = await call(session.token, 'POST', '/api/v2/commandStatus', { transactionId: command });
      expect(response.json()).toMatchObject({ command: { transactionId: command, imei1: lenders } });
    }
    expect(await state()).toBe(before);
  });

  // ---- Point 6: files follow their batch ----

  it('stores uploads under names nobody guesses; a guessed name gets nothing', async () => {
    expect(superFile).toMatch(/^disablecamerafiles\/[0-9a-f]{32}-cameras\.csv$/);
    expect(userFile).toMatch(/^disablecamerafiles\/[0-9a-f]{32}-cameras\.csv$/);
    const noSuchFile = {
      status: 404,
      body: { status: 'error', code: 'NOT_FOUND', message: UPLOAD_LINK_MESSAGES.noSuchFile },
    };
    const guesses = [
      'disablecamerafiles/2026-11-28T04-00-00-000Z-cameras.csv',
      `disablecamerafiles/${'0'.repeat(32)}-cameras.csv`,
      `disablecamerafiles/${superFile.split('/')[1]?.replace(/^./, (c) => (c === 'a' ? 'b' : 'a'))}`,
    ];
    for (const guess of guesses) expect(answer(await download(superadmin, guess))).toEqual(noSuchFile);
  });

  it("refuses a SUPERADMIN's file to an ADMIN and a USER with reports, as batch/results refuses them", async () => {
    const before = await state();
    // The ADMIN is not above the SUPERADMIN: "belongs to another user".
    expect(answer(await download(admin, superFile))).toEqual(answer(await results(admin, superBatch)));
    expect(answer(await download(admin, superFile))).toEqual({
      status: 403,
      body: { status: 'error', code: 'FORBIDDEN', message: BATCH_AUTHORITY_MESSAGES.notYours },
    });
    // The USER with Reports alone has not the batch's screen.
    expect(answer(await download(reporter, superFile))).toEqual(answer(await results(reporter, superBatch)));
    expect(answer(await download(reporter, superFile))).toMatchObject({
      status: 403,
      body: { message: MESSAGES.unauthorised },
    });
    // Another tenant's user: the file is not there, and the batch is not either.
    expect(answer(await download(rSuper, superFile))).toMatchObject({
      status: 404,
      body: { message: UPLOAD_LINK_MESSAGES.noSuchFile },
    });
    expect(answer(await results(rSuper, superBatch))).toMatchObject({
      status: 404,
      body: { message: BATCH_AUTHORITY_MESSAGES.noSuchBatch },
    });
    expect(await state()).toBe(before);
  });

  it('serves a file to its owner and to a higher level', async () => {
    const csv = imeiCsv([lenders]);
    for (const [session, file] of [
      [superadmin, superFile],
      [cameraUser, userFile],
      [superadmin, userFile],
      [admin, userFile],
    ] as const) {
      const response = await download(session, file);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.body).toBe(csv);
    }
  });

  it('links in the Reports history only the files the user may read', async () => {
    const history = async (session: Session) => {
      const response = await call(session.token, 'POST', '/api/downloadReports.php', {
        report: 'disablecamera',
        startdate: '2020-01-01',
        enddate: '2099-12-31',
      });
      expect(response.statusCode, response.body).toBe(200);
      return Object.fromEntries(
        (response.json().items as { id: number; file: string | null }[]).map((row) => [row.id, row.file]),
      );
    };
    const link = (file: string) => `/api/v2/uploads/${file}`;
    expect(await history(superadmin)).toEqual({ [superBatch]: link(superFile), [userBatch]: link(userFile) });
    expect(await history(admin)).toEqual({ [superBatch]: null, [userBatch]: link(userFile) });
    expect(await history(reporter)).toEqual({ [superBatch]: null, [userBatch]: null });
    expect(await history(cameraUser)).toEqual({ [superBatch]: null, [userBatch]: link(userFile) });
    // A retailer's user: its own uploads only (none).
    expect(await history(rSuper)).toEqual({});
  });

  // ---- A retailer's ADMIN and the lender's objects ----

  it("does not let a retailer's ADMIN cancel, read or pause the lender's command or batch", async () => {
    const before = await state();
    const cancel = await call(rAdmin.token, 'POST', '/api/v2/cancelCommand', { transactionId: command });
    expect(answer(cancel)).toEqual({
      status: 404,
      body: { status: 'error', code: 'NOT_FOUND', message: COMMAND_MESSAGES.noSuchCommand },
    });
    const noSuchBatch = {
      status: 404,
      body: { status: 'error', code: 'NOT_FOUND', message: BATCH_AUTHORITY_MESSAGES.noSuchBatch },
    };
    for (const path of ['batch/pause', 'batch/resume', 'batch/cancel', 'batch/progress', 'batchStatus']) {
      const response = await call(rAdmin.token, 'POST', `/api/v2/${path}`, { batchId: userBatch });
      expect(answer(response), path).toEqual(noSuchBatch);
    }
    expect(answer(await results(rAdmin, userBatch))).toEqual(noSuchBatch);
    const exported = await call(rAdmin.token, 'GET', `/api/v2/batch/export?batchId=${userBatch}`);
    expect(answer(exported)).toEqual(noSuchBatch);
    expect((await call(rAdmin.token, 'POST', '/api/v2/batches', {})).json()).toEqual({
      status: 'success',
      items: [],
      next: null,
    });
    const row = await database.db
      .selectFrom('commands')
      .select('status')
      .where('transaction_id', '=', command)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('QUEUED');
    expect(await state()).toBe(before);
  });

  it("shows a retailer's ADMIN none of the lender's devices in any list or count", async () => {
    const before = await state();
    const home = (await call(rAdmin.token, 'GET', '/api/homeData.php')).json();
    expect(home).toMatchObject({ total_device: 1, device_today: 1 });
    const dashboard = (await call(rAdmin.token, 'GET', '/api/v2/dashboard')).json();
    expect(dashboard).toMatchObject({ devicesTotal: 1 });
    // Only its own device's commands: none (the lender's LOCK and the batches' commands are not counted).
    expect(dashboard.commandsByStatus).toEqual([]);
    const details = (
      await call(rAdmin.token, 'POST', '/api/devicedetails.php', { imeis: [lenders, retailers] })
    ).json();
    expect(details.items.map((d: { imei1: string }) => d.imei1)).toEqual([retailers]);
    const versions = (await call(rAdmin.token, 'POST', '/api/getAppVersionDevices.php', {})).json();
    expect(versions.items).toEqual([{ appversion: '3.2.1', devices: 1 }]);
    expect((await call(rAdmin.token, 'POST', '/api/v2/pendingCommands', { imei: lenders })).json()).toEqual({
      status: 'success',
      items: [],
    });
    expect(
      (await call(rAdmin.token, 'POST', '/api/auditReportByImei.php', { imei1: lenders })).json(),
    ).toEqual({ status: 'success', registration: [], release: [], commands: [], deenroll: [] });
    const identity = await call(rAdmin.token, 'POST', '/api/v2/deviceIdentity', { imei: lenders });
    expect(answer(identity)).toMatchObject({ status: 404, body: { message: MESSAGES.noResults } });
    const registrations = (
      await call(rAdmin.token, 'POST', '/api/downloadReports.php', {
        report: 'registration',
        match: 'ALL',
        startdate: '2020-01-01',
        enddate: '2099-12-31',
      })
    ).json();
    expect(registrations.items.map((r: { imei1: string }) => r.imei1)).toEqual([retailers]);
    // The lender sees both.
    expect((await call(superadmin.token, 'GET', '/api/homeData.php')).json()).toMatchObject({
      total_device: 2,
    });
    expect(await state()).toBe(before);
  });

  it("keeps the lender's audit entries from a retailer's users, and its enrollment secrets", async () => {
    const before = await state();
    // The audit log is a SUPERADMIN's (the route table): the retailer's ADMIN is refused outright.
    const refused = await call(rAdmin.token, 'POST', '/api/v2/audit/search', { imei: lenders });
    expect(refused.statusCode).toBe(403);
    const search = async (session: Session, imei: string) =>
      (await call(session.token, 'POST', '/api/v2/audit/search', { imei })).json().total as number;
    expect(await search(superadmin, lenders)).toBeGreaterThan(0);
    expect(await search(rSuper, lenders)).toBe(0);
    const exported = await call(
      rSuper.token,
      'GET',
      `/api/v2/audit/export?imei=${encodeURIComponent(lenders)}`,
    );
    expect(exported.statusCode).toBe(200);
    expect(exported.headers['x-total-rows']).toBe('0');
    // Enrollment secrets admit a device into any tenant: the lender's alone.
    for (const [method, url, payload] of [
      ['GET', '/api/v2/enrollmentSecrets', undefined],
      ['POST', '/api/v2/enrollmentSecrets', { name: 'retailer-secret' }],
      ['POST', '/api/v2/enrollmentSecrets/revoke', { id: 1 }],
    ] as const) {
      const response = await call(rSuper.token, method, url, payload);
      expect(answer(response), url).toEqual({
        status: 403,
        body: { status: 'error', code: 'FORBIDDEN', message: ENROLLMENT_SECRET_MESSAGES.lenderOnly },
      });
    }
    expect((await call(superadmin.token, 'GET', '/api/v2/enrollmentSecrets')).statusCode).toBe(200);
    expect(await state()).toBe(before);
  });
});
