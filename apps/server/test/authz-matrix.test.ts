/**
 * The authorization matrix, generated from the route permission table: every route × every kind of
 * caller gets the documented allow or deny, and every deny leaves the database untouched.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_DEFINITIONS, MESSAGES, type ScreenName } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Access, ROUTE_POLICIES } from '../src/authz/policies';
import { databaseKinds, fingerprint as fingerprintOf, openTestDatabase, type TestDatabase } from './db';
import { registerProfile, startDeviceServer } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';
import { defaultRequest, GUARDED_TABLES } from './route-matrix';

type Caller =
  | 'anonymous'
  | 'userWithout'
  | 'userWith'
  | 'admin'
  | 'superadmin'
  | 'activeKey'
  | 'deactivatedKey';
const CALLERS: Caller[] = [
  'anonymous',
  'userWithout',
  'userWith',
  'admin',
  'superadmin',
  'activeKey',
  'deactivatedKey',
];

/** The permission a route needs (command routes: the permission of the command in the request below). */
function neededPermission(route: string, access: Access): ScreenName | null {
  if (access.kind === 'permission') return access.permission;
  if (access.kind !== 'command') return null;
  const script = /\/api\/(bulk\w+Copy)\.php$/.exec(route)?.[1];
  if (script)
    return (COMMAND_DEFINITIONS.find((d) => d.bulkScript === `${script}.php`)?.screen ??
      null) as ScreenName | null;
  // locknotification, getimeidetails and updateCommandOnServer are called with action 'lock',
  // updateStatusOnServer with statusOf 'lockfiles'
  return 'lockDevice';
}

/** The documented decision: true when the caller passes authorization. */
function allowed(access: Access, caller: Caller, permitted: boolean): boolean {
  if (access.kind === 'public') return true;
  if (caller === 'anonymous' || caller === 'deactivatedKey') return false;
  const credential = caller === 'activeKey' ? 'key' : 'session';
  if (!access.credentials.includes(credential)) return false;
  // The active key belongs to an ADMIN and carries the ADMIN's rights.
  const level =
    caller === 'superadmin' ? 'SUPERADMIN' : caller === 'admin' || caller === 'activeKey' ? 'ADMIN' : 'USER';
  switch (access.kind) {
    case 'signedIn':
      return true;
    case 'permission':
    case 'command':
      return level !== 'USER' || (caller === 'userWith' && permitted);
    case 'admin':
      return level !== 'USER';
    case 'superadmin':
      return level === 'SUPERADMIN';
  }
}

describe.each(databaseKinds())('the authorization matrix on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let device: string;
  const tokens: Partial<Record<Caller, string>> = {};
  const withPermission = new Map<ScreenName, string>();

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    const webDist = mkdtempSync(join(tmpdir(), 'lendlock-web-'));
    writeFileSync(join(webDist, 'index.html'), '<!doctype html><div id="root"></div>');
    const server = await startDeviceServer(database, 'embedded', { webDist });
    app = server.app;
    // No background work: every change to the data must come from the request under test.
    await app.ctx.batchWorker.stop();
    device = (await registerProfile(app)).profile.imei1;
    const adminUser = await buildUser(database, { userlevel: 'ADMIN' });
    const admin = await loginAs(app, adminUser);
    tokens.admin = admin.token;
    tokens.superadmin = (await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }))).token;
    tokens.userWithout = (await loginAs(app, await buildUser(database))).token;
    const key = async () =>
      (
        await app.inject({
          method: 'POST',
          url: '/keyapi/generate_key.php',
          headers: { 'x-api-key': admin.token },
          payload: { key_name: 'matrix', password: adminUser.password },
        })
      ).json();
    tokens.activeKey = (await key()).key;
    const dead = await key();
    await app.inject({
      method: 'POST',
      url: '/keyapi/keymanagement/update_key_status.php',
      headers: { 'x-api-key': admin.token },
      payload: { keyId: dead.id, status: 'inactive' },
    });
    tokens.deactivatedKey = dead.key;
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  /** Everything a refused call must leave as it was. */
  const fingerprint = () => fingerprintOf(database.db, GUARDED_TABLES);
  const request = (route: string, token: string | undefined) => defaultRequest(route, token, device);

  const routes = Object.entries(ROUTE_POLICIES);

  it('covers every route of the table', () => {
    expect(routes.length).toBeGreaterThan(40);
  });

  it.each(routes)('%s', async (route, access) => {
    const permission = neededPermission(route, access);
    if (permission && !withPermission.has(permission)) {
      withPermission.set(
        permission,
        (await loginAs(app, await buildUser(database, { permissions: [permission] }))).token,
      );
    }
    for (const caller of CALLERS) {
      let token =
        caller === 'userWith'
          ? permission
            ? withPermission.get(permission)
            : tokens.userWithout
          : tokens[caller];
      // logout.php ends the session it is called with: give it a session of its own.
      if (route === 'POST /api/logout.php' && caller !== 'anonymous' && !caller.endsWith('Key')) {
        const level = caller === 'admin' ? 'ADMIN' : caller === 'superadmin' ? 'SUPERADMIN' : 'USER';
        token = (await loginAs(app, await buildUser(database, { userlevel: level }))).token;
      }
      const expected = allowed(access, caller, permission !== null);
      const before = expected ? null : await fingerprint();
      const response = await app.inject(request(route, token));
      // An authorization refusal: no or bad credential (401 UNAUTHENTICATED), or the right is missing.
      const body = String(response.headers['content-type'] ?? '').includes('json') ? response.json() : {};
      const refused =
        (response.statusCode === 401 && body.code === 'UNAUTHENTICATED') ||
        (response.statusCode === 403 && body.message === MESSAGES.unauthorised);
      expect({ caller, status: response.statusCode, refused }).toEqual({
        caller,
        status: response.statusCode,
        refused: !expected,
      });
      expect(response.statusCode, `${caller} → ${response.body.slice(0, 200)}`).toBeLessThan(500);
      if (!expected) expect(await fingerprint(), `${caller} changed data`).toBe(before);
    }
  });
});

/**
 * Authority by owner and level (only the right person changes a phone): the route table lets a
 * caller reach cancelCommand, the batch controls and the history calls; the object decides the rest.
 * Each row is {who issued or owns it, who calls} → allowed, or refused with its message, every refusal
 * leaving commands, devices, batches and their rows as they were, with one 'refused' audit row for a
 * refused change (none for a refused read).
 */
describe.each(databaseKinds())('authority by owner and level on %s', (kind) => {
  type Person =
    | 'userDetails'
    | 'userLock'
    | 'userLock2'
    | 'userUnlock'
    | 'userRelease'
    | 'admin'
    | 'admin2'
    | 'superadmin'
    | 'superadmin2'
    | 'adminKey'
    | 'admin2Key';
  let database: TestDatabase;
  let app: FastifyInstance;
  let device: string;
  const people = {} as Record<Person, { email: string; token: string; id: number }>;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = (await startDeviceServer(database, 'embedded')).app;
    // No background work: a batch stays where the test left it.
    await app.ctx.batchWorker.stop();
    device = (await registerProfile(app)).profile.imei1;
    const person = async (level: 'USER' | 'ADMIN' | 'SUPERADMIN', permissions: string[] = []) => {
      const user = await buildUser(database, { userlevel: level, permissions });
      return { user, session: { email: user.email, id: user.id, token: (await loginAs(app, user)).token } };
    };
    const keyOf = async (owner: Awaited<ReturnType<typeof person>>) => {
      const response = await app.inject({
        method: 'POST',
        url: '/keyapi/generate_key.php',
        headers: { 'x-api-key': owner.session.token },
        payload: { key_name: 'authority', password: owner.user.password },
      });
      return { ...owner.session, token: response.json().key as string };
    };
    people.userDetails = (await person('USER', ['deviceDetails'])).session;
    people.userLock = (await person('USER', ['deviceDetails', 'lockDevice'])).session;
    people.userLock2 = (await person('USER', ['deviceDetails', 'lockDevice'])).session;
    people.userUnlock = (await person('USER', ['deviceDetails', 'unlockDevice'])).session;
    people.userRelease = (await person('USER', ['releaseDevice'])).session;
    const admin = await person('ADMIN');
    const admin2 = await person('ADMIN');
    people.admin = admin.session;
    people.admin2 = admin2.session;
    people.superadmin = (await person('SUPERADMIN')).session;
    people.superadmin2 = (await person('SUPERADMIN')).session;
    people.adminKey = await keyOf(admin);
    people.admin2Key = await keyOf(admin2);
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const post = (who: Person, url: string, payload: object, method: 'POST' | 'PUT' = 'POST') =>
    app.inject({ method, url, headers: { 'x-api-key': people[who].token }, payload });
  /** Everything a refusal must leave as it was (the audit log is checked row by row). */
  const fingerprint = async () => {
    const parts = await Promise.all(
      ['commands', 'devices', 'batches', 'batch_items', 'batch_chunks'].map(async (table) => {
        const row = await sql<{ h: string | null; n: number }>`
          SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h, count(*)::int AS n
          FROM ${sql.table(table)} t`.execute(database.db);
        return `${table}:${row.rows[0]?.n}:${row.rows[0]?.h}`;
      }),
    );
    return parts.join(',');
  };
  const lastAuditId = async () =>
    Number(
      (await sql<{ id: number | null }>`SELECT max(id) AS id FROM audit_log`.execute(database.db)).rows[0]
        ?.id ?? 0,
    );
  const auditsAfter = (id: number) =>
    database.db
      .selectFrom('audit_log')
      .select(['actor', 'action', 'target', 'result', 'details'])
      .where('id', '>', id)
      .orderBy('id')
      .execute();

  /**
   * Runs `call`; when `refusal` is given, expects a 403 with that message, the data unchanged and, for a
   * refused change, exactly one audit row `action` / 'refused' (`refusedResult`) by the caller.
   */
  const expectRefused = async (
    call: () => Promise<{ statusCode: number; json(): { message?: string } }>,
    refusal: string,
    audit: { caller: Person; action: string; result: string } | null,
  ) => {
    const before = await fingerprint();
    const auditFrom = await lastAuditId();
    const response = await call();
    expect({ status: response.statusCode, message: response.json().message }).toEqual({
      status: 403,
      message: refusal,
    });
    expect(await fingerprint()).toBe(before);
    const audits = await auditsAfter(auditFrom);
    if (audit) {
      expect(audits).toEqual([
        expect.objectContaining({
          actor: people[audit.caller].email,
          action: audit.action,
          result: audit.result,
        }),
      ]);
    } else {
      expect(audits).toEqual([]);
    }
  };

  // ---- Cancelling a pending command ----
  type Issuer =
    | 'USER lock'
    | 'ADMIN unlock'
    | 'SUPERADMIN update'
    | 'SUPERADMIN lock'
    | 'system lock'
    | 'ADMIN key lock';
  const ISSUER_LEVEL: Record<Issuer, string> = {
    'USER lock': 'USER',
    'ADMIN unlock': 'ADMIN',
    'SUPERADMIN update': 'SUPERADMIN',
    'SUPERADMIN lock': 'SUPERADMIN',
    'system lock': 'system',
    'ADMIN key lock': 'ADMIN',
  };
  const HIGHER = 'You cannot cancel a command issued by a higher level.';
  const UNAUTHORISED = MESSAGES.unauthorised;
  const issue = async (issuer: Issuer): Promise<string> => {
    if (issuer === 'system lock') {
      return (await app.ctx.commands.issue({ imei: device, command: 'LOCK', iface: 'S', actor: null }))
        .transactionId;
    }
    const [who, url, action]: [Person, string, string] =
      issuer === 'USER lock'
        ? ['userLock2', '/api/locknotification.php', 'lock']
        : issuer === 'ADMIN unlock'
          ? ['admin2', '/api/locknotification.php', 'unlock']
          : issuer === 'SUPERADMIN update'
            ? ['superadmin2', '/api/adminlocknotification.php', 'UPDATE']
            : issuer === 'SUPERADMIN lock'
              ? ['superadmin2', '/api/locknotification.php', 'lock']
              : ['admin2Key', '/api/locknotification.php', 'lock'];
    const response = await post(who, url, { imei: device, action });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().transactionId;
  };
  // {issuer} × {caller} → cancelled, or the refusal's message. Levels: USER < ADMIN (and the system, and
  // an ADMIN's key) < SUPERADMIN; equal is allowed; a device action needs SUPERADMIN.
  const CANCEL_MATRIX: [Issuer, Person, 'cancelled' | typeof HIGHER | typeof UNAUTHORISED][] = [
    ['USER lock', 'userDetails', UNAUTHORISED],
    ['USER lock', 'userLock', 'cancelled'],
    ['USER lock', 'userUnlock', UNAUTHORISED],
    ['USER lock', 'admin', 'cancelled'],
    ['USER lock', 'superadmin', 'cancelled'],
    ['USER lock', 'adminKey', 'cancelled'],
    ['ADMIN unlock', 'userDetails', UNAUTHORISED],
    ['ADMIN unlock', 'userLock', UNAUTHORISED],
    ['ADMIN unlock', 'userUnlock', HIGHER],
    ['ADMIN unlock', 'admin', 'cancelled'],
    ['ADMIN unlock', 'superadmin', 'cancelled'],
    ['ADMIN unlock', 'adminKey', 'cancelled'],
    ['SUPERADMIN update', 'userDetails', UNAUTHORISED],
    ['SUPERADMIN update', 'userLock', UNAUTHORISED],
    ['SUPERADMIN update', 'admin', UNAUTHORISED],
    ['SUPERADMIN update', 'adminKey', UNAUTHORISED],
    ['SUPERADMIN update', 'superadmin', 'cancelled'],
    ['SUPERADMIN lock', 'userLock', HIGHER],
    ['SUPERADMIN lock', 'admin', HIGHER],
    ['SUPERADMIN lock', 'adminKey', HIGHER],
    ['SUPERADMIN lock', 'superadmin', 'cancelled'],
    ['system lock', 'userDetails', UNAUTHORISED],
    ['system lock', 'userLock', HIGHER],
    ['system lock', 'admin', 'cancelled'],
    ['system lock', 'superadmin', 'cancelled'],
    ['ADMIN key lock', 'userLock', HIGHER],
    ['ADMIN key lock', 'admin', 'cancelled'],
    ['ADMIN key lock', 'superadmin', 'cancelled'],
  ];

  it.each(CANCEL_MATRIX)('cancel: a command of %s, cancelled by %s → %s', async (issuer, caller, outcome) => {
    const transactionId = await issue(issuer);
    const cancel = () => post(caller, '/api/v2/cancelCommand', { transactionId });
    if (outcome !== 'cancelled') {
      await expectRefused(cancel, outcome, { caller, action: 'command.cancel', result: 'REFUSED' });
      return;
    }
    const auditFrom = await lastAuditId();
    const response = await cancel();
    expect(response.json()).toEqual({ status: 'success', message: 'Command cancelled' });
    const row = await database.db
      .selectFrom('commands')
      .select('status')
      .where('transaction_id', '=', transactionId)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('CANCELLED');
    const [audit] = await auditsAfter(auditFrom);
    expect(audit).toMatchObject({
      actor: people[caller].email,
      action: 'command.cancel',
      target: device,
      result: 'CANCELLED',
      details: { transactionId, imei: device, issuer: { level: ISSUER_LEVEL[issuer] } },
    });
  });

  // ---- Batch control: the owner or a strictly higher level, with the command's permission ----
  const NOT_YOURS =
    'This batch belongs to another user: only its owner or a higher level can see or control it.';
  const uploadLock = async (owner: Person) => {
    const body = multipart(
      { user: people[owner].email },
      { name: 'authority.csv', type: 'text/csv', content: imeiCsv([device]) },
    );
    const response = await app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': people[owner].token },
      payload: body.payload,
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().batchId as number;
  };
  type Owner = 'USER' | 'ADMIN' | 'SUPERADMIN' | "ADMIN's key";
  const OWNER: Record<Owner, Person> = {
    USER: 'userLock2',
    ADMIN: 'admin2',
    SUPERADMIN: 'superadmin2',
    "ADMIN's key": 'admin2Key',
  };
  const BATCH_MATRIX: [Owner, Person, 'allowed' | typeof NOT_YOURS | typeof UNAUTHORISED][] = [
    ['USER', 'userLock2', 'allowed'],
    ['USER', 'userLock', NOT_YOURS],
    ['USER', 'userDetails', UNAUTHORISED],
    ['USER', 'admin', 'allowed'],
    ['USER', 'adminKey', 'allowed'],
    ['USER', 'superadmin', 'allowed'],
    ['ADMIN', 'admin2', 'allowed'],
    ['ADMIN', 'admin2Key', 'allowed'],
    ['ADMIN', 'userLock', NOT_YOURS],
    ['ADMIN', 'admin', NOT_YOURS],
    ['ADMIN', 'adminKey', NOT_YOURS],
    ['ADMIN', 'superadmin', 'allowed'],
    ['SUPERADMIN', 'superadmin2', 'allowed'],
    ['SUPERADMIN', 'userLock', NOT_YOURS],
    ['SUPERADMIN', 'admin', NOT_YOURS],
    ['SUPERADMIN', 'adminKey', NOT_YOURS],
    ['SUPERADMIN', 'superadmin', NOT_YOURS],
    ["ADMIN's key", 'admin2', 'allowed'],
    ["ADMIN's key", 'admin2Key', 'allowed'],
    ["ADMIN's key", 'admin', NOT_YOURS],
    ["ADMIN's key", 'superadmin', 'allowed'],
  ];
  const READS = ['/api/v2/batch/progress', '/api/v2/batch/results', '/api/v2/batchStatus'];
  const CHANGES = ['pause', 'resume', 'cancel'] as const;

  it.each(BATCH_MATRIX)('batch control: a batch of a %s, by %s → %s', async (owner, caller, outcome) => {
    const batchId = await uploadLock(OWNER[owner]);
    if (outcome !== 'allowed') {
      for (const url of READS) await expectRefused(() => post(caller, url, { batchId }), outcome, null);
      for (const change of CHANGES) {
        await expectRefused(() => post(caller, `/api/v2/batch/${change}`, { batchId }), outcome, {
          caller,
          action: `batch.${change}`,
          result: 'refused',
        });
      }
      return;
    }
    for (const url of READS) {
      const response = await post(caller, url, { batchId });
      expect({ url, status: response.statusCode }).toEqual({ url, status: 200 });
    }
    const expected = { pause: 'paused', resume: 'running', cancel: 'cancelled' } as const;
    for (const change of CHANGES) {
      const auditFrom = await lastAuditId();
      const response = await post(caller, `/api/v2/batch/${change}`, { batchId });
      expect(response.json().batch?.phase).toBe(expected[change]);
      expect(await auditsAfter(auditFrom)).toEqual([
        expect.objectContaining({
          actor: people[caller].email,
          action: `batch.${change}`,
          target: `batch:${batchId}`,
          result: { pause: 'paused', resume: 'resumed', cancel: 'discarded' }[change],
        }),
      ]);
    }
  });

  // ---- The history calls: the permission of the screen their statusOf or action belongs to ----
  const status = (who: Person, statusOf: string, fileName: string, isComplete = 'complete') =>
    post(who, '/api/updateStatusOnServer.php', { statusOf, fileName, isComplete, lastimei: device });

  it("updateStatusOnServer: only with the screen of its statusOf, and only into the caller's own rows", async () => {
    // The attack: a USER with no permission wrote a 'complete' row into the Release Device history.
    await expectRefused(() => status('userDetails', 'releasefiles', 'forged.csv'), UNAUTHORISED, null);
    await expectRefused(() => status('userLock', 'releasefiles', 'forged.csv'), UNAUTHORISED, null);
    const unknown = await status('admin', 'nosuchfiles', 'x.csv');
    expect(unknown.statusCode).toBe(400);
    for (const who of ['userRelease', 'admin', 'adminKey'] as const) {
      const auditFrom = await lastAuditId();
      const response = await status(who, 'releasefiles', `${who}.csv`, 'incomplete');
      expect(response.json(), who).toEqual({ status: 'success', message: 'Status updated' });
      expect(await auditsAfter(auditFrom)).toEqual([
        expect.objectContaining({ actor: people[who].email, action: 'batch.status', result: 'incomplete' }),
      ]);
    }
    // Another user's call with the same file name makes its own row; the first one is left as it was.
    const mine = () =>
      database.db
        .selectFrom('batches')
        .select(['user_id', 'status', 'command'])
        .where('file_name', '=', 'userRelease.csv')
        .orderBy('id')
        .execute();
    const before = await mine();
    expect(before).toEqual([{ user_id: people.userRelease.id, status: 'incomplete', command: 'RELEASE' }]);
    await status('admin', 'releasefiles', 'userRelease.csv');
    expect((await mine())[0]).toEqual(before[0]);
  });

  it('updateCommandOnServer: the permission of its action, audited', async () => {
    const list = (who: Person) =>
      post(who, '/api/updateCommandOnServer.php', { imeilist: device, action: 'release' }, 'PUT');
    await expectRefused(() => list('userDetails'), UNAUTHORISED, null);
    await expectRefused(() => list('userLock'), UNAUTHORISED, null);
    const auditFrom = await lastAuditId();
    expect((await list('userRelease')).json()).toEqual({ status: 'success', message: '1 IMEIs recorded' });
    expect(await auditsAfter(auditFrom)).toEqual([
      expect.objectContaining({
        actor: people.userRelease.email,
        action: 'batch.list.RELEASE',
        result: 'recorded',
      }),
    ]);
  });
});
