/**
 * Helpers for the collections suites: API calls with a token, the policy saved, loans imported, payments
 * received at the engine's clock, Today's Plan, the kill switch, an engine on a test clock, and devices
 * enrolled, online or offline. Each asserts that its call was taken, so a suite's tests assert behaviour.
 */
import {
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  type ImportLoansRequest,
  type Session,
} from '@lendlock/contract';
import type { SimulatedDevice } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, expect, vi } from 'vitest';
import type { DatabaseKind } from '../src/db/database';
import { CollectionsEngine, type EngineOptions } from '../src/modules/collections/engine';
import { openTestDatabase, type TestDatabase } from './db';
import { TEST_ENROLLMENT_SECRET } from './devices';
import { buildTestApp, buildUser, loginAs } from './factories';

type Method = 'GET' | 'PUT' | 'POST' | 'DELETE';

/** The lenders' zone in these suites (IST: UTC+05:30 all year). */
export const LENDER_ZONE = 'Asia/Kolkata';

/** The instant of `HH:MM` IST on a day. */
export function ist(day: string, time: string): Date {
  return new Date(`${day}T${time}:00+05:30`);
}

/**
 * A lender's policy in IST: collections on, unlocked on payment, released automatically, quiet from 21:00
 * to 09:00; `overrides` say the reminders and the lock rule.
 */
export function lenderPolicy(overrides: Partial<CollectionsPolicy>): CollectionsPolicy {
  return {
    ...DEFAULT_COLLECTIONS_POLICY,
    enabled: true,
    timeZone: LENDER_ZONE,
    unlockOnPayment: true,
    release: 'AUTO',
    quietHours: { start: '21:00', end: '09:00' },
    ...overrides,
  };
}

/** A caller of `app`'s API as a session's (or a key's) `token`, under `prefix`. */
export function apiCaller(app: () => FastifyInstance, prefix = '') {
  return (token: string, method: Method, url: string, payload?: object) =>
    app().inject({
      method,
      url: `${prefix}${url}`,
      headers: { 'x-api-key': token },
      ...(payload ? { payload } : {}),
    });
}

/** A new user of `overrides` (a SUPERADMIN by default), signed in to `app`. */
export async function signedIn(
  app: FastifyInstance,
  database: TestDatabase,
  overrides: Parameters<typeof buildUser>[1] = { userlevel: 'SUPERADMIN' },
): Promise<Session> {
  return loginAs(app, await buildUser(database, overrides));
}

/** Saves `policy` as `token`'s user (a SUPERADMIN), asserting it was saved; returns the answer. */
export async function savePolicy(
  app: FastifyInstance,
  token: string,
  policy: CollectionsPolicy,
): Promise<{ version: number; message: string }> {
  const saved = await apiCaller(() => app)(token, 'PUT', '/api/v2/collections/policy', { policy });
  expect(saved.statusCode, saved.body).toBe(200);
  return saved.json();
}

/** Imports `loans` through the loans API as `token`'s user, asserting they were taken. */
export async function importLoans(
  app: FastifyInstance,
  token: string,
  loans: ImportLoansRequest['loans'],
): Promise<void> {
  const imported = await apiCaller(() => app)(token, 'POST', '/api/v2/loans', { loans });
  expect(imported.statusCode, imported.body).toBe(200);
}

/**
 * Records a payment through the API as `token`'s user (paid now, as the API allows), then dates its
 * receipt (and, with `paidToo`, its payment) at `at`: the engine's clock.
 */
export async function payAt(
  app: FastifyInstance,
  token: string,
  payment: { paymentRef: string; loanRef: string; amount: string },
  at: Date,
  paidToo = false,
): Promise<void> {
  const paid = await apiCaller(() => app)(token, 'POST', '/api/v2/payments', {
    ...payment,
    paidAt: new Date().toISOString(),
  });
  expect(paid.statusCode, paid.body).toBe(200);
  const alsoPaid = paidToo ? sql`, paid_at = ${at}` : sql``;
  await sql`UPDATE loan_payments SET received_at = ${at}${alsoPaid} WHERE payment_ref = ${payment.paymentRef}`.execute(
    app.ctx.db,
  );
}

/** Today's Plan (or a dry run) for `request`, as `token`'s user, asserting it was answered. */
export async function requestPlan(app: FastifyInstance, token: string, request: object) {
  const response = await apiCaller(() => app)(token, 'POST', '/api/v2/collections/plan', request);
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** Turns the kill switch on or off as `token`'s user, asserting it was; returns the answer. */
export async function setKillSwitch(
  app: FastifyInstance,
  token: string,
  on: boolean,
  reason: string,
): Promise<{ cancelled: number; message: string }> {
  const response = await apiCaller(() => app)(token, 'PUT', '/api/v2/collections/kill-switch', {
    on,
    reason,
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json();
}

/** A collections engine on `app`'s services, driven by the test (one-shot commands live 72 hours). */
export function testEngine(
  app: FastifyInstance,
  options: Omit<EngineOptions, 'db' | 'commands' | 'log' | 'events' | 'oneShotTtlMs'> &
    Partial<Pick<EngineOptions, 'oneShotTtlMs'>> = {},
): CollectionsEngine {
  return new CollectionsEngine({
    db: app.ctx.db,
    commands: app.ctx.commands,
    log: app.log,
    events: app.ctx.webhookDelivery,
    oneShotTtlMs: 72 * 3_600_000,
    ...options,
  });
}

/** Waits until the server records device `imei` as `online` (or offline). */
export function waitOnline(app: FastifyInstance, imei: string, online: boolean): Promise<void> {
  return vi.waitFor(async () => {
    const row = await app.ctx.db
      .selectFrom('devices')
      .select('online')
      .where('imei1', '=', imei)
      .executeTakeFirstOrThrow();
    expect(row.online).toBe(online);
  });
}

/** Registers `device`, connects it unless `offline`, and leaves it to the suite to disconnect after. */
export async function enrol(
  suite: { readonly devices: SimulatedDevice[] },
  device: SimulatedDevice,
  offline = false,
): Promise<SimulatedDevice> {
  suite.devices.push(device);
  await device.register();
  if (!offline) await device.connect();
  return device;
}

export interface CollectionsAppSuite {
  readonly database: TestDatabase;
  /** The app, not listening: called through `inject`; devices register on the test enrollment secret. */
  readonly app: FastifyInstance;
  /** A SUPERADMIN signed in. */
  readonly superadmin: Session;
  /** An ADMIN signed in. */
  readonly admin: Session;
}

/**
 * The set-up the collections API suites share: a test database of `kind`, an app on it without the
 * collections workers (the tests drive an engine), a signed-in SUPERADMIN and ADMIN, made before the
 * suite's tests and closed after them.
 */
export function collectionsAppSuite(kind: DatabaseKind): CollectionsAppSuite {
  let database: TestDatabase | undefined;
  let app: FastifyInstance | undefined;
  let superadmin: Session | undefined;
  let admin: Session | undefined;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, {
      enrollmentSecret: TEST_ENROLLMENT_SECRET,
      collectionsWorkers: false,
    });
    superadmin = await signedIn(app, database);
    admin = await signedIn(app, database, { userlevel: 'ADMIN' });
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the collections suite is not set up yet');
    return value;
  };
  return {
    get database() {
      return ready(database);
    },
    get app() {
      return ready(app);
    },
    get superadmin() {
      return ready(superadmin);
    },
    get admin() {
      return ready(admin);
    },
  };
}
