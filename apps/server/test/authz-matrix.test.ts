/**
 * The authorization matrix, generated from the route permission table: every route × every kind of
 * caller gets the documented allow or deny, and every deny leaves the database untouched.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMMAND_DEFINITIONS, MESSAGES, type ScreenName } from '@lendlock/contract';
import type { FastifyInstance, InjectOptions } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Access, ROUTE_POLICIES } from '../src/authz/policies';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { randomProfile, startDeviceServer, TEST_ENROLLMENT_SECRET } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

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
  return 'lockDevice'; // locknotification, getimeidetails and updateCommandOnServer are called with action 'lock'
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
    await app.ctx.batches.stop();
    const profile = randomProfile();
    device = profile.imei1;
    await app.inject({
      method: 'POST',
      url: '/device/v1/register',
      headers: { 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
      payload: profile,
    });
    const admin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    tokens.admin = admin.token;
    tokens.superadmin = (await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }))).token;
    tokens.userWithout = (await loginAs(app, await buildUser(database))).token;
    const key = async () =>
      (
        await app.inject({
          method: 'POST',
          url: '/keyapi/generate_key.php',
          headers: { 'x-api-key': admin.token },
          payload: { key_name: 'matrix' },
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
  const fingerprint = async () => {
    const tables = [
      'users',
      'user_permissions',
      'api_keys',
      'devices',
      'commands',
      'batches',
      'batch_items',
      'batch_chunks',
      'financed_imeis',
      'password_resets',
      'releases',
      'deenrollments',
      'enrollment_secrets',
      'reregistration_requests',
      'device_imeis',
    ];
    const parts = await Promise.all(
      tables.map(async (table) => {
        const row = await sql<{
          h: string | null;
          n: number;
        }>`SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h, count(*)::int AS n FROM ${sql.table(table)} t`.execute(
          database.db,
        );
        return `${table}:${row.rows[0]?.n}:${row.rows[0]?.h}`;
      }),
    );
    return parts.join(',');
  };

  const request = (route: string, token: string | undefined): InjectOptions => {
    const [method, path] = route.split(' ') as [InjectOptions['method'], string];
    const headers: Record<string, string> = token ? { 'x-api-key': token } : {};
    const url = path.replace(':feature', 'lockfiles').replace(':file', 'none.csv').replace('/*', '/anything');
    if (path.startsWith('/api/bulk')) {
      const body = multipart({}, { name: 'm.csv', type: 'text/csv', content: imeiCsv([device]) });
      return { method, url, headers: { ...headers, ...body.headers }, payload: body.payload };
    }
    const bodies: Record<string, object> = {
      '/api/locknotification.php': { imei: device, action: 'lock' },
      '/api/getimeidetails.php': { imei: device, action: 'lock' },
      '/api/updateCommandOnServer.php': { imeilist: device, action: 'lock' },
      '/api/formattedDevice.php': { imei: '123456789012345' },
      '/api/adminlocknotification.php': { imei: '123456789012345', action: 'REBOOT' },
      '/api/devicedetails.php': { imei: device },
      '/api/auditReportByImei.php': { imei1: device },
      '/api/login.php': { email: 'nobody@lendlock.com', password: 'x' },
      '/device/v1/register': randomProfile(),
      '/device/v1/nonce': { imei1: device },
      '/api/v2/deviceIdentity': { imei: device },
      '/api/v2/reregistration/decide': { id: 1, decision: 'reject' },
      '/api/v2/enrollmentSecrets': { name: `matrix-${Math.random().toString(36).slice(2)}` },
      '/api/v2/enrollmentSecrets/revoke': { id: 1 },
    };
    if (path.startsWith('/device/v1/')) headers['x-enrollment-secret'] = TEST_ENROLLMENT_SECRET;
    const query = path.startsWith('/api/v2/reports/export')
      ? '?report=deenroll&startdate=2026-01-01&enddate=2026-01-02'
      : '';
    return method === 'GET'
      ? { method, url: `${url}${query}`, headers }
      : { method, url, headers, payload: bodies[path] ?? {} };
  };

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
