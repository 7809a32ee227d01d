/**
 * Three tenants with one of every object, for the tenant matrix: the lender L (no retailer),
 * retailers A and B. Each has users of every level, an API key, a registered device with a QUEUED
 * command, a batch with its stored file, a loan with a payment, a collections hold, a release awaiting
 * approval and a failed action, a webhook endpoint with a delivery, a re-registration request, and the
 * audit rows all these wrote. Plus the callers of the matrix, signed in.
 */
import { randomBytes } from 'node:crypto';
import { grantableToUser, PERMISSION_NAMES } from '@lendlock/contract';
import { imeiFor } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import type { TestDatabase } from './db';
import { registerProfile } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

export type TenantName = 'L' | 'A' | 'B';
export const RETAILER_PHONE: Record<TenantName, string | null> = {
  L: null,
  A: '9999999999',
  B: '9888888888',
};

/** One of every object a route can name. */
export interface TenantObjects {
  readonly imei: string;
  readonly imei2: string;
  readonly transactionId: string;
  readonly batchId: number;
  /** `feature/file` of the batch's stored upload. */
  readonly upload: string;
  /** The name the batch's file was uploaded under. */
  readonly fileName: string;
  /** A USER of the tenant, without permissions (the object of User Management's calls). */
  readonly userId: number;
  readonly userEmail: string;
  readonly userPhone: string;
  readonly keyId: number;
  readonly keyName: string;
  readonly endpointId: number;
  readonly endpointUrl: string;
  readonly deliveryId: number;
  readonly messageId: string;
  readonly loanRef: string;
  readonly paymentRef: string;
  readonly customerName: string;
  readonly requestId: number;
  readonly releaseId: number;
}

export interface Tenant {
  readonly name: TenantName;
  readonly phone: string | null;
  readonly objects: TenantObjects;
  /** Every text that names one of its objects or users: none may appear in another tenant's answer. */
  readonly markers: readonly string[];
}

/** Made-up objects: the same calls with these answer as for an unknown object. */
export const UNKNOWN: TenantObjects = {
  imei: imeiFor(999, 799_999_998),
  imei2: imeiFor(999, 799_999_999),
  transactionId: 'f0000000-0000-4000-8000-000000000000',
  batchId: 999_999,
  upload: 'lockfiles/nosuchupload.csv',
  fileName: 'nosuchupload.csv',
  userId: 999_999,
  userEmail: 'nobody-matrix@lendlock.com',
  userPhone: '9000000001',
  keyId: 999_999,
  keyName: 'no-such-key',
  endpointId: 999_999,
  endpointUrl: 'https://127.0.0.1/no-such-hook',
  deliveryId: 999_999,
  messageId: 'msg_nosuch',
  loanRef: 'NO-SUCH-LOAN',
  paymentRef: 'NO-SUCH-PAYMENT',
  customerName: 'Nobody',
  requestId: 999_999,
  releaseId: 999_999,
};

export type CallerName = 'lenderSuper' | 'lenderAdmin' | 'lenderUser' | 'aAdmin' | 'aUser' | 'bAdmin';
export const CALLERS: readonly CallerName[] = [
  // Retailers first: their calls must change nothing, so the lender's (which may) come after them.
  'aAdmin',
  'aUser',
  'bAdmin',
  'lenderSuper',
  'lenderAdmin',
  'lenderUser',
];
export const TENANT_OF: Record<CallerName, TenantName> = {
  lenderSuper: 'L',
  lenderAdmin: 'L',
  lenderUser: 'L',
  aAdmin: 'A',
  aUser: 'A',
  bAdmin: 'B',
};

/** Every permission a USER may hold. */
export const EVERY_PERMISSION = PERMISSION_NAMES.filter(grantableToUser);

const today = () => new Date().toISOString().slice(0, 10);
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

export interface Tenants {
  readonly tenants: Record<TenantName, Tenant>;
  readonly tokens: Record<CallerName, string>;
  readonly passwords: Record<CallerName, string>;
}

/**
 * Builds the three tenants in `app` (batches and webhook delivery should be stopped, so that nothing
 * moves but what a request does; the app must allow private webhook addresses).
 */
export async function buildTenants(app: FastifyInstance, database: TestDatabase): Promise<Tenants> {
  const db = database.db;
  const tag = randomBytes(3).toString('hex');
  const person = async (
    tenant: TenantName,
    role: string,
    userlevel: 'USER' | 'ADMIN' | 'SUPERADMIN',
    permissions: string[] = [],
  ) => {
    const user = await buildUser(database, {
      email: `${tenant.toLowerCase()}-${role}-${tag}@lendlock.com`,
      userlevel,
      permissions,
      ...(RETAILER_PHONE[tenant] ? { retailerPhone: RETAILER_PHONE[tenant] ?? undefined } : {}),
    });
    return { user, token: (await loginAs(app, user)).token };
  };
  const call = async (token: string, method: 'POST' | 'PUT', url: string, payload: object) => {
    const response = await app.inject({ method, url, headers: { 'x-api-key': token }, payload });
    if (response.statusCode !== 200)
      throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json();
  };

  const lenderSuper = await person('L', 'super', 'SUPERADMIN');
  const lenderAdmin = await person('L', 'admin', 'ADMIN');
  const lenderUser = await person('L', 'user', 'USER', EVERY_PERMISSION);
  const aAdmin = await person('A', 'admin', 'ADMIN');
  const aUser = await person('A', 'user', 'USER', EVERY_PERMISSION);
  const bAdmin = await person('B', 'admin', 'ADMIN');
  const tokens: Record<CallerName, string> = {
    lenderSuper: lenderSuper.token,
    lenderAdmin: lenderAdmin.token,
    lenderUser: lenderUser.token,
    aAdmin: aAdmin.token,
    aUser: aUser.token,
    bAdmin: bAdmin.token,
  };
  const passwords: Record<CallerName, string> = {
    lenderSuper: lenderSuper.user.password,
    lenderAdmin: lenderAdmin.user.password,
    lenderUser: lenderUser.user.password,
    aAdmin: aAdmin.user.password,
    aUser: aUser.user.password,
    bAdmin: bAdmin.user.password,
  };
  const callerEmails: Record<TenantName, string[]> = {
    L: [lenderSuper.user.email, lenderAdmin.user.email, lenderUser.user.email],
    A: [aAdmin.user.email, aUser.user.email],
    B: [bAdmin.user.email],
  };

  const build = async (name: TenantName): Promise<Tenant> => {
    const phone = RETAILER_PHONE[name];
    const lower = name.toLowerCase();
    const registered = await registerProfile(app, { retailer_phone: phone });
    if (registered.statusCode !== 200) throw new Error(`register: ${registered.statusCode}`);
    const imei = registered.profile.imei1;
    const imei2 = registered.profile.imei2 ?? '';
    // The objects of User Management: a USER without permissions; more users of each level.
    const target = await person(name, 'target', 'USER');
    const superadmin = name === 'L' ? lenderSuper : await person(name, 'super', 'SUPERADMIN');
    const owner = name === 'L' ? lenderAdmin : await person(name, 'owner', 'ADMIN');
    // A key of a USER with Key Management (so that the tenant's ADMINs may manage it).
    const keyOwner = await person(name, 'keyowner', 'USER', ['keyManagement']);
    const keyName = `key-${lower}-${tag}`;
    const key = await call(keyOwner.token, 'POST', '/keyapi/generate_key.php', {
      key_name: keyName,
      password: keyOwner.user.password,
    });
    // A batch of a USER of the tenant, on its device, with the file it uploaded.
    const batchOwner = await person(name, 'batchowner', 'USER', EVERY_PERMISSION);
    const fileName = `matrix-${lower}-${tag}.csv`;
    const body = multipart({}, { name: fileName, type: 'text/csv', content: imeiCsv([imei]) });
    const uploaded = await app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': batchOwner.token },
      payload: body.payload,
    });
    if (uploaded.statusCode !== 200) throw new Error(`upload: ${uploaded.statusCode} ${uploaded.body}`);
    const batchId = uploaded.json().batchId as number;
    const batch = await db
      .selectFrom('batches')
      .select('stored_file')
      .where('id', '=', batchId)
      .executeTakeFirstOrThrow();
    if (!batch.stored_file) throw new Error('the batch kept no file');
    // A QUEUED command (the device is offline), after the batch's.
    const { transactionId } = await app.ctx.commands.issue({
      imei,
      command: 'LOCK',
      iface: 'S',
      actor: null,
    });
    // A loan with a payment, a hold, a release awaiting approval, a failed action.
    const loanRef = `LOAN-${name}-${tag}`;
    const paymentRef = `PAY-${name}-${tag}`;
    const customerName = `Customer ${name} ${tag}`;
    await call(lenderAdmin.token, 'POST', '/api/v2/loans', {
      loans: [
        {
          loanRef,
          imei,
          customerName,
          currency: 'INR',
          instalments: [
            { dueDate: inDays(10), amount: '1000.00' },
            { dueDate: inDays(40), amount: '1000.00' },
          ],
        },
      ],
    });
    await call(lenderAdmin.token, 'POST', '/api/v2/payments', {
      paymentRef,
      loanRef,
      amount: '100.00',
      paidAt: today(),
    });
    await call(owner.token, 'PUT', `/api/v2/collections/holds/${imei}`, { reason: `hold ${name}` });
    const loan = await db
      .selectFrom('loans')
      .select('id')
      .where('loan_ref', '=', loanRef)
      .executeTakeFirstOrThrow();
    const action = (kind: string, state: 'AWAITING_APPROVAL' | 'FAILED') =>
      db
        .insertInto('collection_actions')
        .values({
          loan_id: loan.id,
          imei1: imei,
          kind,
          action_date: today(),
          version: 1,
          rule: 'matrix',
          state,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
    const release = await action('RELEASE', 'AWAITING_APPROVAL');
    await action('LOCK', 'FAILED');
    // A webhook endpoint made by one of the tenant's ADMINs, with a failed delivery.
    const endpointUrl = `https://127.0.0.1/hook-${lower}-${tag}`;
    const created = await call(owner.token, 'POST', '/api/v2/webhooks', {
      url: endpointUrl,
      events: ['command.failed'],
    });
    const endpointId = created.endpoint.id as number;
    const messageId = `msg_${lower}_${tag}`;
    const delivery = await db
      .insertInto('webhook_deliveries')
      .values({
        endpoint_id: endpointId,
        message_id: messageId,
        event: 'command.failed',
        payload: JSON.stringify({ type: 'command.failed', data: { imei } }),
        status: 'FAILED',
        give_up_at: new Date(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    // A refused re-registration of its device, waiting for an operator.
    const request = await db
      .insertInto('reregistration_requests')
      .values({ imei1: imei, profile: JSON.stringify({ brand: `Evil ${name}` }), address: '203.0.113.9' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const objects: TenantObjects = {
      imei,
      imei2,
      transactionId,
      batchId,
      upload: batch.stored_file,
      fileName,
      userId: target.user.id,
      userEmail: target.user.email,
      userPhone: target.user.phone,
      keyId: key.id,
      keyName,
      endpointId,
      endpointUrl,
      deliveryId: Number(delivery.id),
      messageId,
      loanRef,
      paymentRef,
      customerName,
      requestId: Number(request.id),
      releaseId: Number(release.id),
    };
    const markers = [
      imei,
      imei2,
      transactionId,
      fileName,
      target.user.email,
      superadmin.user.email,
      owner.user.email,
      keyOwner.user.email,
      batchOwner.user.email,
      ...callerEmails[name],
      keyName,
      endpointUrl,
      messageId,
      loanRef,
      paymentRef,
      customerName,
    ];
    return { name, phone, objects, markers: [...new Set(markers)] };
  };
  const tenants = { L: await build('L'), A: await build('A'), B: await build('B') };
  return { tenants, tokens, passwords };
}
