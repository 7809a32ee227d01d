/**
 * The tenant matrix, generated from the route permission table: every route that names
 * an object × {lender SUPERADMIN, ADMIN, USER with every permission; retailer A's ADMIN, USER with every
 * permission; retailer B's ADMIN} × another tenant's object. A retailer's caller is refused (401/403), or
 * answered exactly as for an unknown object (same status, same message), and the database is unchanged; the
 * lender, who sees every tenant, is not answered as for an unknown object. A list shows a retailer's caller
 * none of the other tenants' objects, and shows the lender's theirs. Then the decisions: every signed-in
 * route, called successfully, records an authority decision (AUTHZ_CHECK=enforce).
 */
import { DEFAULT_COLLECTIONS_POLICY, loansCsvText } from '@lendlock/contract';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { sql } from 'kysely';
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { ROUTE_POLICIES } from '../src/authz/policies';
import type { DatabaseKind } from '../src/db/database';
import { sealSecret } from '../src/modules/mfa/secret';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { registerProfile, startDeviceServer } from './devices';
import { buildUser, loginAs } from './factories';
import { multipart } from './multipart';
import { GUARDED_TABLES } from './route-matrix';
import {
  buildTenants,
  CALLERS,
  type CallerName,
  TENANT_OF,
  type Tenant,
  type TenantName,
  type TenantObjects,
  type Tenants,
  UNKNOWN,
} from './tenants';

/** The tables of the tenant matrix: the route matrix's and every tenant's objects beside them. */
const TABLES = [
  ...GUARDED_TABLES,
  'webhook_endpoints',
  'webhook_deliveries',
  'collection_holds',
  'collection_actions',
  'collection_policies',
  'collection_control',
];

/** A call, without its credential: `url` defaults to the route's path. */
interface Call {
  readonly url?: string;
  readonly payload?: object;
  readonly file?: { readonly name: string; readonly content: string };
}

interface ObjectRoute {
  /** The call naming `o`'s object(s). */
  readonly call: (o: TenantObjects) => Call;
  /** The texts of `o` the call sends (an answer may echo them: they are masked before answers are compared). */
  readonly names: (o: TenantObjects) => readonly string[];
  /** What an allowed answer (2xx) to the lender shows of the object. */
  readonly shows?: (o: TenantObjects) => string;
  /**
   * The calls that may create the caller's own row whatever they name (a new user of its own tenant, a
   * new loan of its own device): the answer is not compared, only the target tenant's rows must not change.
   */
  readonly targetRows?: (db: TestDatabase['db'], target: Tenant) => Promise<string>;
  /** The call removes its object: only the first of the lender's callers finds it. */
  readonly removes?: true;
}

interface ListRoute {
  readonly call: Call;
  /** What the lender's ADMIN and SUPERADMIN see of every tenant in it. */
  readonly shows?: (o: TenantObjects) => string;
  /** The list follows the level too (a USER sees only its own): the lender's USER is not expected to see. */
  readonly byLevel?: true;
  /** How many devices the answer counts: a retailer's callers, its own one; the lender's, all three. */
  readonly devices?: (json: unknown) => number;
}

const day = () => new Date().toISOString().slice(0, 10);
const unique = () => Math.random().toString(36).slice(2, 10);
const loanInput = (o: TenantObjects, loanRef: string) => ({
  loanRef,
  imei: o.imei,
  customerName: 'Matrix',
  currency: 'INR',
  instalments: [{ dueDate: '2030-01-01', amount: '10.00' }],
});

/** Every route that names an object, in the order they run: the ones that change it come last. */
const OBJECT_ROUTES: Record<string, ObjectRoute> = {
  // Users and keys
  'POST /api/updateUser.php': {
    call: (o) => ({ payload: { id: o.userId, email: o.userEmail, phone: o.userPhone, permissions: [] } }),
    names: (o) => [String(o.userId), o.userEmail, o.userPhone],
  },
  'POST /api/updateUserStatus.php': {
    call: (o) => ({ payload: { email: o.userEmail, status: 'ACTIVE' } }),
    names: (o) => [o.userEmail],
  },
  'POST /api/updateLoginStatus.php': {
    call: (o) => ({ payload: { email: o.userEmail } }),
    names: (o) => [o.userEmail],
  },
  'POST /api/v2/mfa/reset': {
    call: (o) => ({ payload: { email: o.userEmail } }),
    names: (o) => [o.userEmail],
  },
  'POST /api/addUser.php': {
    call: (o) => ({
      payload: {
        email: `new-${unique()}@lendlock.com`,
        phone: `97${String(Math.floor(Math.random() * 1e8)).padStart(8, '0')}`,
        password: 'matrix-password-1',
        retailer_phone: o === UNKNOWN ? '9777777777' : (phoneOf(o) ?? null),
      },
    }),
    names: () => [],
    targetRows: async (db, target) =>
      String(
        (
          await sql<{ n: number }>`SELECT count(*)::int AS n FROM users
            WHERE retailer_phone IS NOT DISTINCT FROM ${target.phone}`.execute(db)
        ).rows[0]?.n,
      ),
  },
  'POST /keyapi/generate_key.php': {
    call: (o) => ({ payload: { key_name: 'matrix', password: 'not-the-password', user_id: o.userId } }),
    names: (o) => [String(o.userId)],
  },
  'POST /keyapi/keymanagement/update_key_status.php': {
    call: (o) => ({ payload: { keyId: o.keyId, status: 'active' } }),
    names: (o) => [String(o.keyId)],
  },
  // Devices
  'POST /api/v2/deviceIdentity': {
    call: (o) => ({ payload: { imei: o.imei } }),
    names: (o) => [o.imei],
    shows: (o) => o.imei,
  },
  'POST /api/devicedetails.php': {
    call: (o) => ({ payload: { imei: o.imei } }),
    names: (o) => [o.imei],
    shows: (o) => o.imei2,
  },
  'POST /api/auditReportByImei.php': {
    call: (o) => ({ payload: { imei1: o.imei } }),
    names: (o) => [o.imei],
    shows: (o) => o.transactionId,
  },
  'GET /api/v2/auditReport/export': {
    call: (o) => ({ url: `/api/v2/auditReport/export?imei1=${o.imei}` }),
    names: (o) => [o.imei],
    shows: (o) => o.transactionId,
  },
  'POST /api/v2/pendingCommands': {
    call: (o) => ({ payload: { imei: o.imei } }),
    names: (o) => [o.imei],
    shows: (o) => o.transactionId,
  },
  'POST /api/v2/commandStatus': {
    call: (o) => ({ payload: { transactionId: o.transactionId } }),
    names: (o) => [o.transactionId],
  },
  'POST /api/v2/financedImeis': { call: (o) => ({ payload: { imeis: [o.imei] } }), names: (o) => [o.imei] },
  'POST /api/v2/financedImeis/upload': {
    call: (o) => ({ file: { name: 'financed.csv', content: `imei1\n${o.imei}\n` } }),
    names: (o) => [o.imei],
  },
  // Batches and their files
  'POST /api/v2/batchStatus': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'POST /api/v2/batch/progress': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'POST /api/v2/batch/results': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'GET /api/v2/batch/export': {
    call: (o) => ({ url: `/api/v2/batch/export?batchId=${o.batchId}` }),
    names: (o) => [String(o.batchId)],
  },
  'GET /api/v2/uploads/:feature/:file': {
    call: (o) => ({ url: `/api/v2/uploads/${o.upload}` }),
    names: (o) => [o.upload, o.upload.split('/').pop() ?? ''],
    shows: (o) => o.imei,
  },
  // Webhooks
  'POST /api/v2/webhooks/update': {
    call: (o) => ({ payload: { id: o.endpointId, enabled: true } }),
    names: (o) => [String(o.endpointId)],
    shows: (o) => o.endpointUrl,
  },
  'POST /api/v2/webhooks/deliveries': {
    call: (o) => ({ payload: { id: o.endpointId } }),
    names: (o) => [String(o.endpointId)],
    shows: (o) => o.messageId,
  },
  // Loans and payments
  'POST /api/v2/loans/get': {
    call: (o) => ({ payload: { loanRef: o.loanRef } }),
    names: (o) => [o.loanRef],
    shows: (o) => o.paymentRef,
  },
  'POST /api/v2/loans/promise': {
    call: (o) => ({ payload: { loanRef: o.loanRef, until: null } }),
    names: (o) => [o.loanRef],
  },
  'POST /api/v2/loans': {
    call: (o) => ({ payload: { loans: [loanInput(o, `NEW-${unique()}`)] } }),
    names: (o) => [o.imei],
  },
  'POST /api/v2/loans/upload': {
    call: (o) => ({ file: { name: 'loans.csv', content: loansCsvText([loanInput(o, `NEW-${unique()}`)]) } }),
    names: (o) => [o.imei],
  },
  'POST /api/v2/payments': {
    call: (o) => ({
      payload: { paymentRef: `NEW-${unique()}`, loanRef: o.loanRef, amount: '1.00', paidAt: day() },
    }),
    names: (o) => [o.loanRef],
  },
  'POST /api/v2/payments/upload': {
    call: (o) => ({
      file: {
        name: 'payments.csv',
        content: `payment_ref,loan_ref,amount,paid_at\r\nNEW-${unique()},${o.loanRef},1.00,${day()}\r\n`,
      },
    }),
    names: (o) => [o.loanRef],
  },
  // Collections
  'GET /api/v2/collections/holds': {
    call: (o) => ({ url: `/api/v2/collections/holds?imei=${o.imei}` }),
    names: (o) => [o.imei],
    shows: (o) => o.imei,
  },
  'GET /api/v2/collections/releases': {
    call: (o) => ({ url: `/api/v2/collections/releases?imei=${o.imei}` }),
    names: (o) => [o.imei],
    shows: (o) => o.loanRef,
  },
  'GET /api/v2/collections/failures': {
    call: (o) => ({ url: `/api/v2/collections/failures?imei=${o.imei}` }),
    names: (o) => [o.imei],
    shows: (o) => o.imei,
  },
  'PUT /api/v2/collections/holds/:imei': {
    call: (o) => ({ url: `/api/v2/collections/holds/${o.imei}`, payload: { reason: 'matrix' } }),
    names: (o) => [o.imei],
  },
  // The audit log (SUPERADMIN)
  'POST /api/v2/audit/search': {
    call: (o) => ({ payload: { imei: o.imei } }),
    names: (o) => [o.imei],
    shows: (o) => o.transactionId,
  },
  'GET /api/v2/audit/export': {
    call: (o) => ({ url: `/api/v2/audit/export?imei=${o.imei}` }),
    names: (o) => [o.imei],
    shows: (o) => o.transactionId,
  },
  // ---- The calls that change their object (the lender's allowed cells run after every refusal) ----
  'POST /api/v2/reregistration/decide': {
    call: (o) => ({ payload: { id: o.requestId, decision: 'reject' } }),
    names: (o) => [String(o.requestId)],
  },
  'POST /api/v2/collections/releases/:id/reject': {
    call: (o) => ({
      url: `/api/v2/collections/releases/${o.releaseId}/reject`,
      payload: { reason: 'matrix' },
    }),
    names: (o) => [String(o.releaseId)],
  },
  'POST /api/v2/collections/releases/:id/approve': {
    call: (o) => ({ url: `/api/v2/collections/releases/${o.releaseId}/approve`, payload: {} }),
    names: (o) => [String(o.releaseId)],
  },
  'DELETE /api/v2/collections/holds/:imei': {
    call: (o) => ({ url: `/api/v2/collections/holds/${o.imei}` }),
    names: (o) => [o.imei],
    removes: true,
  },
  'POST /api/v2/payments/reverse': {
    call: (o) => ({ payload: { paymentRef: o.paymentRef, reason: 'matrix' } }),
    names: (o) => [o.paymentRef],
  },
  'POST /api/v2/cancelCommand': {
    call: (o) => ({ payload: { transactionId: o.transactionId } }),
    names: (o) => [o.transactionId],
  },
  'POST /api/locknotification.php': {
    call: (o) => ({ payload: { imei: o.imei, action: 'lock' } }),
    names: (o) => [o.imei],
  },
  'POST /api/formattedDevice.php': { call: (o) => ({ payload: { imei: o.imei } }), names: (o) => [o.imei] },
  'POST /api/adminlocknotification.php': {
    call: (o) => ({ payload: { imei: o.imei, action: 'REBOOT' } }),
    names: (o) => [o.imei],
  },
  'POST /api/getimeidetails.php': {
    call: (o) => ({ payload: { imei: o.imei, action: 'lock' } }),
    names: (o) => [o.imei],
  },
  'PUT /api/updateCommandOnServer.php': {
    call: (o) => ({ payload: { imeilist: o.imei, action: 'lock' } }),
    names: (o) => [o.imei],
  },
  'POST /api/v2/batch/pause': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'POST /api/v2/batch/resume': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'POST /api/v2/batch/cancel': {
    call: (o) => ({ payload: { batchId: o.batchId } }),
    names: (o) => [String(o.batchId)],
  },
  'POST /api/v2/webhooks/replay': {
    call: (o) => ({ payload: { deliveryId: o.deliveryId } }),
    names: (o) => [String(o.deliveryId)],
  },
  'POST /api/v2/webhooks/delete': {
    call: (o) => ({ payload: { id: o.endpointId } }),
    names: (o) => [String(o.endpointId)],
    removes: true,
  },
};

/** Every list: it shows a retailer's caller none of another tenant's objects. */
const LIST_ROUTES: Record<string, ListRoute> = {
  'GET /api/getUsers.php': { call: {}, shows: (o) => o.userEmail, byLevel: true },
  'GET /api/v2/mfa/users': { call: {} },
  'GET /keyapi/keymanagement/view_keys.php': { call: {}, shows: (o) => o.keyName, byLevel: true },
  'GET /api/v2/webhooks': { call: {}, shows: (o) => o.endpointUrl },
  'POST /api/getAppVersionDevices.php': {
    call: { payload: {} },
    devices: (json) =>
      (json as { items: { devices: number }[] }).items.reduce((n, item) => n + item.devices, 0),
  },
  'GET /api/v2/dashboard': { call: {}, devices: (json) => (json as { devicesTotal: number }).devicesTotal },
  'POST /api/v2/batches': {
    call: { payload: {} },
    shows: (o) => o.fileName,
    byLevel: true,
  },
  'POST /api/v2/batch/current': { call: { payload: { statusOf: 'lockfiles' } } },
  'POST /api/downloadReports.php': {
    call: { payload: { report: 'registration', startdate: day(), enddate: day(), match: 'ALL' } },
    shows: (o) => o.imei,
  },
  'GET /api/v2/reports/export': {
    call: { url: `/api/v2/reports/export?report=registration&startdate=${day()}&enddate=${day()}&match=ALL` },
    shows: (o) => o.imei,
  },
  'POST /api/v2/collections/plan': { call: { payload: {} }, shows: (o) => o.loanRef },
  'POST /api/v2/collections/plan/export': { call: { payload: {} }, shows: (o) => o.loanRef },
  'GET /api/v2/collections/holds': { call: {}, shows: (o) => o.imei },
  'GET /api/v2/collections/releases': { call: {}, shows: (o) => o.loanRef },
  'POST /api/v2/audit/search': { call: { payload: { limit: 10_000 } }, shows: (o) => o.transactionId },
  'GET /api/v2/audit/export': { call: {}, shows: (o) => o.transactionId },
};

/** The routes of the table this matrix does not call, each with the reason. */
const NOT_CALLED: Record<string, string> = {
  'POST /api/logout.php': "the caller's own session: names no object",
  'GET /api/v2/mfa/status': "the caller's own two-factor state",
  'POST /api/v2/mfa/enrol/start': "the caller's own two-factor set-up",
  'POST /api/v2/mfa/enrol/confirm': "the caller's own two-factor set-up",
  'GET /api/getPermissions.php': 'the catalogue of permissions: the same for every tenant',
  'GET /api/v2/enrollmentSecrets': "SUPERADMIN's admission of agents: no tenant's object",
  'POST /api/v2/enrollmentSecrets': "SUPERADMIN's admission of agents: no tenant's object",
  'POST /api/v2/enrollmentSecrets/revoke': "SUPERADMIN's admission of agents: no tenant's object",
  'POST /api/v2/webhooks': "creates an endpoint of the caller's own tenant: names no other tenant's object",
  'GET /api/homeData.php':
    'counts only, no object to look for (privilege.test.ts checks a retailer’s counts)',
  'GET /api/v2/dashboard':
    'counts only, no object to look for (privilege.test.ts checks a retailer’s counts)',
  'POST /api/updateStatusOnServer.php': "writes the caller's own history row, by file name; names no object",
  'GET /api/v2/collections/policy': "the lender's policy governs every tenant: no tenant's object",
  'PUT /api/v2/collections/policy': "the lender's policy governs every tenant: no tenant's object",
  'GET /api/v2/collections/policy/versions': "the lender's policy governs every tenant: no tenant's object",
  'GET /api/v2/collections/kill-switch': "the lender's kill switch governs every tenant: no tenant's object",
  'PUT /api/v2/collections/kill-switch': "the lender's kill switch governs every tenant: no tenant's object",
  'GET /api/v2/collections/runs': "the lender's runs cover every tenant: no tenant's object",
};
/** The bulk uploads name devices in a file: the batch job decides per row after the upload (stopped here). */
const isBulkUpload = (route: string) => /^POST \/api\/bulk\w+Copy\.php$/.test(route);

function phoneOf(o: TenantObjects): string | null | undefined {
  return PHONES.get(o);
}
const PHONES = new Map<TenantObjects, string | null>();

/** The text of an answer; an xlsx file's is the text of its parts. */
async function textOf(response: LightMyRequestResponse): Promise<string> {
  if (!String(response.headers['content-type'] ?? '').includes('spreadsheetml')) return response.body;
  const zip = await yauzl.fromBufferPromise(response.rawPayload, { lazyEntries: true });
  const parts: string[] = [];
  for await (const entry of zip.eachEntry()) {
    const chunks: Buffer[] = [];
    for await (const chunk of await zip.openReadStreamPromise(entry)) chunks.push(chunk as Buffer);
    parts.push(Buffer.concat(chunks).toString('utf8'));
  }
  return parts.join('\n');
}

/** The answer as compared: status, message, body text, with the texts the call named masked. */
async function answer(response: LightMyRequestResponse, names: readonly string[]) {
  let text = await textOf(response);
  for (const name of [...names].filter((n) => n.length > 0).sort((a, b) => b.length - a.length))
    text = text.split(name).join('<named>');
  let message: unknown;
  if (String(response.headers['content-type'] ?? '').includes('json')) {
    try {
      message = (JSON.parse(text) as { message?: unknown }).message;
    } catch {
      message = undefined;
    }
  }
  return { status: response.statusCode, message, text };
}

const isRefusal = (status: number) => status === 401 || status === 403;

/** The signed-in routes of the table that this file neither calls nor lists with a reason. */
function unexplained(): string[] {
  return Object.keys(ROUTE_POLICIES).filter(
    (route) =>
      ROUTE_POLICIES[route]?.kind !== 'public' &&
      !(route in OBJECT_ROUTES) &&
      !(route in LIST_ROUTES) &&
      !(route in NOT_CALLED) &&
      !isBulkUpload(route),
  );
}

/**
 * A test database with the three tenants, built through an app that does not check decisions (the set-up's
 * own calls are not under test), and then the app under test on it.
 */
async function openTenantApp(kind: DatabaseKind, authorizationCheck: 'off' | 'enforce') {
  const database = await openTestDatabase(kind);
  const start = async (check: 'off' | 'enforce') => {
    const { app } = await startDeviceServer(database, 'embedded', {
      webhookAllowPrivate: true,
      authorizationCheck: check,
    });
    // No background work: every change to the data comes from the request under test.
    await app.ctx.batchWorker.stop();
    await app.ctx.webhookDelivery.stop();
    return app;
  };
  let app = await start('off');
  const built = await buildTenants(app, database);
  for (const tenant of Object.values(built.tenants)) PHONES.set(tenant.objects, tenant.phone);
  if (authorizationCheck !== 'off') {
    await app.close();
    app = await start(authorizationCheck);
  }
  return { database, app, built };
}

function inject(app: FastifyInstance, route: string, token: string, call: Call) {
  const [method, path] = route.split(' ') as [InjectOptions['method'], string];
  const headers: Record<string, string> = { 'x-api-key': token };
  const url = call.url ?? path;
  if (call.file) {
    const body = multipart({}, { name: call.file.name, type: 'text/csv', content: call.file.content });
    return app.inject({ method, url, headers: { ...headers, ...body.headers }, payload: body.payload });
  }
  return app.inject({ method, url, headers, ...(call.payload ? { payload: call.payload } : {}) });
}

describe.each(databaseKinds())('the tenant matrix on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let tenants: Record<TenantName, Tenant>;
  let tokens: Record<CallerName, string>;

  beforeAll(async () => {
    const opened = await openTenantApp(kind, 'off');
    database = opened.database;
    app = opened.app;
    ({ tenants, tokens } = opened.built);
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  /** The tenants whose objects `caller` calls on: every tenant but its own. */
  const othersOf = (caller: CallerName) =>
    (['L', 'A', 'B'] as const).filter((name) => name !== TENANT_OF[caller]).map((name) => tenants[name]);
  const isLender = (caller: CallerName) => TENANT_OF[caller] === 'L';

  it('covers every signed-in route of the table, or says why not', () => {
    expect(unexplained()).toEqual([]);
    for (const route of [
      ...Object.keys(OBJECT_ROUTES),
      ...Object.keys(LIST_ROUTES),
      ...Object.keys(NOT_CALLED),
    ])
      expect(ROUTE_POLICIES, route).toHaveProperty([route]);
  });

  // The lists first: the object calls below may change (as the lender) what they list.
  it.each(Object.entries(LIST_ROUTES))('%s: lists no other tenant’s object', async (route, spec) => {
    const problems: string[] = [];
    for (const caller of CALLERS) {
      const response = await inject(app, route, tokens[caller], spec.call);
      if (response.statusCode >= 500) {
        problems.push(`${caller}: ${response.statusCode} ${response.body.slice(0, 120)}`);
        continue;
      }
      const text = await textOf(response);
      if (spec.devices && response.statusCode < 300) {
        const counted = spec.devices(response.json());
        const expected = isLender(caller) ? 3 : 1;
        if (counted !== expected) problems.push(`${caller}: counts ${counted} devices, not ${expected}`);
      }
      for (const target of othersOf(caller)) {
        const cell = `${caller} → ${target.name}`;
        if (!isLender(caller)) {
          const leaked = target.markers.filter((m) => text.includes(m));
          if (leaked.length > 0) problems.push(`${cell}: lists ${leaked.join(', ')}`);
        } else if (
          spec.shows &&
          response.statusCode < 300 &&
          !(spec.byLevel && caller === 'lenderUser') &&
          !text.includes(spec.shows(target.objects))
        ) {
          problems.push(`${cell}: does not list ${spec.shows(target.objects)}`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it.each(Object.entries(OBJECT_ROUTES))('%s: another tenant’s object', async (route, spec) => {
    const problems: string[] = [];
    const removed = new Set<TenantName>();
    for (const caller of CALLERS) {
      const token = tokens[caller];
      const unknown = await answer(await inject(app, route, token, spec.call(UNKNOWN)), spec.names(UNKNOWN));
      for (const target of othersOf(caller)) {
        const cell = `${caller} → ${target.name}`;
        const o = target.objects;
        const before = isLender(caller)
          ? null
          : spec.targetRows
            ? await spec.targetRows(database.db, target)
            : await fingerprint(database.db, TABLES);
        const response = await inject(app, route, token, spec.call(o));
        const got = await answer(response, spec.names(o));
        if (got.status >= 500) {
          problems.push(`${cell}: ${got.status} ${got.text.slice(0, 120)}`);
          continue;
        }
        const asUnknown = got.status === unknown.status && got.message === unknown.message;
        if (isLender(caller)) {
          // The lender sees every tenant: never 'not found' for an object that exists (and is not yet removed).
          if (removed.has(target.name)) continue;
          if (spec.removes && got.status < 300) removed.add(target.name);
          if (unknown.status === 404 && asUnknown)
            problems.push(`${cell}: answered as unknown (${got.status} ${String(got.message)})`);
          else if (
            spec.shows &&
            got.status < 300 &&
            !got.text.includes('<named>') &&
            !got.text.includes(spec.shows(o))
          )
            problems.push(`${cell}: allowed, but the answer does not show ${spec.shows(o)}`);
          continue;
        }
        if (!spec.targetRows && !asUnknown && !(isRefusal(got.status) && unknown.status !== 404))
          problems.push(
            `${cell}: ${got.status} ${JSON.stringify(got.message)}, unknown object: ${unknown.status} ${JSON.stringify(unknown.message)}`,
          );
        const leaked = target.markers.filter((m) => got.text.includes(m));
        if (leaked.length > 0) problems.push(`${cell}: the answer shows ${leaked.join(', ')}`);
        const after = spec.targetRows
          ? await spec.targetRows(database.db, target)
          : await fingerprint(database.db, TABLES);
        if (after !== before) problems.push(`${cell}: changed the database`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('a retailer’s new user is its own, whatever the request names', async () => {
    // addUser above: no user of another tenant was made by a retailer's ADMIN (targetRows). Here, its own.
    const email = `own-${unique()}@lendlock.com`;
    const response = await inject(app, 'POST /api/addUser.php', tokens.aAdmin, {
      payload: { email, phone: '9712345678', password: 'matrix-password-1' },
    });
    expect(response.statusCode, response.body).toBe(200);
    const made = await database.db
      .selectFrom('users')
      .select('retailer_phone')
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    expect(made.retailer_phone).toBe(tenants.A.phone);
  });
});

/**
 * Every signed-in route records an authority decision (authz/decisions.ts): with AUTHZ_CHECK=enforce, a call
 * that succeeds without one answers 500. Each route is called as the lender's SUPERADMIN (who may call every
 * route), on the lender's own objects.
 */
describe.each(databaseKinds())('every route decides, on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let built: Tenants;

  beforeAll(async () => {
    const opened = await openTenantApp(kind, 'enforce');
    database = opened.database;
    app = opened.app;
    built = opened.built;
  }, 180_000);
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  /** A device of the lender's with nothing pending (for the calls a pending command or a loan would refuse). */
  const freshDevice = async () => {
    const { profile, statusCode } = await registerProfile(app, { retailer_phone: null });
    expect(statusCode).toBe(200);
    return profile.imei1;
  };
  /**
   * A new SUPERADMIN, signed in; with `mfa`, a two-factor secret started for it (written as the enrolment
   * start would: that call is itself under test here), confirmed when `mfa` is 'confirmed'.
   */
  const ownAccount = async (mfa?: 'started' | 'confirmed') => {
    const user = await buildUser(database, { userlevel: 'SUPERADMIN' });
    const { token } = await loginAs(app, user);
    const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
    if (mfa)
      await database.db
        .insertInto('user_mfa')
        .values({
          user_id: user.id,
          secret: sealSecret(app.ctx.authSettings.mfa.key, user.id, secret),
          confirmed_at: mfa === 'confirmed' ? new Date() : null,
        })
        .execute();
    return { user, token, secret };
  };

  /** A call of `route` that succeeds for the lender's SUPERADMIN (a fresh one for calls on its own account). */
  const successfulCall = async (route: string): Promise<{ token: string; call: Call }> => {
    const o = built.tenants.L.objects;
    const token = built.tokens.lenderSuper;
    const own = async () => (await ownAccount()).token;
    const withFresh = async (make: (objects: TenantObjects) => Call) => ({
      token,
      call: make({ ...o, imei: await freshDevice() }),
    });
    const special: Record<string, () => Promise<{ token: string; call: Call }>> = {
      'POST /keyapi/generate_key.php': async () => ({
        token,
        call: { payload: { key_name: `decide-${unique()}`, password: built.passwords.lenderSuper } },
      }),
      'POST /api/v2/loans': () => withFresh(OBJECT_ROUTES['POST /api/v2/loans']?.call ?? (() => ({}))),
      'POST /api/v2/loans/upload': () =>
        withFresh(OBJECT_ROUTES['POST /api/v2/loans/upload']?.call ?? (() => ({}))),
      // The lender's device is released by the release approved before them: a device of its own each.
      'POST /api/locknotification.php': () =>
        withFresh(OBJECT_ROUTES['POST /api/locknotification.php']?.call ?? (() => ({}))),
      'POST /api/formattedDevice.php': () =>
        withFresh(OBJECT_ROUTES['POST /api/formattedDevice.php']?.call ?? (() => ({}))),
      'POST /api/adminlocknotification.php': () =>
        withFresh((f) => ({ payload: { imei: f.imei, action: 'REBOOT' } })),
      'POST /api/v2/cancelCommand': async () => {
        const imei = await freshDevice();
        const issued = await app.ctx.commands.issue({ imei, command: 'LOCK', iface: 'S', actor: null });
        return { token, call: { payload: { transactionId: issued.transactionId } } };
      },
      'POST /api/v2/mfa/enrol/confirm': async () => {
        const { token: mine, secret } = await ownAccount('started');
        return { token: mine, call: { payload: { code: await generate({ secret }) } } };
      },
      'POST /api/v2/mfa/reset': async () => {
        const { user } = await ownAccount('confirmed');
        return { token, call: { payload: { email: user.email } } };
      },
      'POST /api/bulkNotifyCopy.php': async () => ({
        token,
        call: {
          file: {
            name: 'decide.csv',
            content: `sno,name,imei1,amount,date,template\r\n1,Asha,${o.imei},1499.50,05/12/2030,Pre\r\n`,
          },
        },
      }),
    };
    const reopen = async () =>
      database.db
        .updateTable('collection_actions')
        .set({ state: 'AWAITING_APPROVAL', decided_by: null, decided_by_user_id: null, decided_at: null })
        .where('id', '=', o.releaseId)
        .execute();
    if (route.startsWith('POST /api/v2/collections/releases/')) await reopen();
    if (route === 'POST /api/v2/collections/releases/:id/approve') {
      // A release is approved for a paid loan: pay the rest (its answer is not under test, the payment is kept).
      await inject(app, 'POST /api/v2/payments', token, {
        payload: { paymentRef: `PAID-${unique()}`, loanRef: o.loanRef, amount: '1900.00', paidAt: day() },
      });
    }
    const made = special[route];
    if (made) return made();
    const object = OBJECT_ROUTES[route];
    if (object) return { token, call: object.call(o) };
    const list = LIST_ROUTES[route];
    if (list) return { token, call: list.call };
    if (isBulkUpload(route))
      return { token, call: { file: { name: 'decide.csv', content: `Sno,IMEI1\r\n1,${o.imei}\r\n` } } };
    const calls: Record<string, () => Promise<{ token: string; call: Call }>> = {
      'POST /api/logout.php': async () => ({ token: await own(), call: { payload: {} } }),
      'GET /api/v2/mfa/status': async () => ({ token, call: {} }),
      'POST /api/v2/mfa/enrol/start': async () => ({ token: await own(), call: { payload: {} } }),
      'POST /api/v2/mfa/enrol/confirm': async () => ({
        token: await own(),
        call: { payload: { code: '000000' } },
      }),
      'GET /api/getPermissions.php': async () => ({ token, call: {} }),
      'GET /api/v2/enrollmentSecrets': async () => ({ token, call: {} }),
      'POST /api/v2/enrollmentSecrets': async () => ({
        token,
        call: { payload: { name: `decide-${unique()}` } },
      }),
      'POST /api/v2/enrollmentSecrets/revoke': async () => ({ token, call: { payload: { id: 1 } } }),
      'POST /api/v2/webhooks': async () => ({
        token,
        call: { payload: { url: `https://127.0.0.1/decide-${unique()}`, events: ['command.failed'] } },
      }),
      'GET /api/homeData.php': async () => ({ token, call: {} }),
      'POST /api/updateStatusOnServer.php': async () => ({
        token,
        call: { payload: { statusOf: 'lockfiles', fileName: 'decide.csv', isComplete: 'incomplete' } },
      }),
      'GET /api/v2/collections/policy': async () => ({ token, call: {} }),
      'PUT /api/v2/collections/policy': async () => ({
        token,
        call: { payload: { policy: DEFAULT_COLLECTIONS_POLICY } },
      }),
      'GET /api/v2/collections/policy/versions': async () => ({ token, call: {} }),
      'GET /api/v2/collections/kill-switch': async () => ({ token, call: {} }),
      'PUT /api/v2/collections/kill-switch': async () => ({
        token,
        call: { payload: { on: true, reason: 'decide' } },
      }),
      'GET /api/v2/collections/runs': async () => ({ token, call: {} }),
    };
    const make = calls[route];
    if (!make) throw new Error(`no call for ${route}`);
    return make();
  };

  const signedInRoutes = [
    ...new Set([
      ...Object.keys(LIST_ROUTES),
      ...Object.keys(OBJECT_ROUTES),
      ...Object.keys(NOT_CALLED),
      ...Object.keys(ROUTE_POLICIES).filter(isBulkUpload),
    ]),
  ];

  it.each(signedInRoutes)('%s records a decision', async (route) => {
    const { token, call } = await successfulCall(route);
    const response = await inject(app, route, token, call);
    const body = response.body.slice(0, 200);
    // A call that does not succeed proves nothing here: it must succeed, and not answer the check's 500.
    expect({ route, status: response.statusCode, body: response.statusCode < 400 ? '' : body }).toEqual({
      route,
      status: response.statusCode < 400 ? response.statusCode : 'a success',
      body: '',
    });
  });
});
