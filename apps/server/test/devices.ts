/** Helpers for tests with real devices: a listening app on a chosen channel, and simulated agents. */
import { randomBytes, randomInt } from 'node:crypto';
import type { DeviceRegistration, Session } from '@lendlock/contract';
import { type DeviceOptions, imeiFor, SimulatedDevice } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import type { Config } from '../src/config';
import type { DatabaseKind } from '../src/db/database';
import { openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

export const TEST_ENROLLMENT_SECRET = 'test-enrollment-secret-0123456789';

export interface DeviceServer {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

export async function startDeviceServer(
  database: TestDatabase,
  channel: 'embedded' | 'mosquitto',
  overrides: Partial<Config> = {},
): Promise<DeviceServer> {
  const app = await buildTestApp(database, {
    enrollmentSecret: TEST_ENROLLMENT_SECRET,
    ...(channel === 'mosquitto'
      ? {
          mqttUrl: inject('mqttUrl') ?? undefined,
          mqttSharedGroup: `t${randomBytes(6).toString('hex')}`,
          // The test Mosquitto is anonymous; the dynamic-security suites start their own broker.
          mqttAllowAnonymous: true,
        }
      : {}),
    ...overrides,
  });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url, close: () => app.close() };
}

/** A random IMEI pair, so parallel runs on one shared broker never meet. */
export function randomProfile(overrides: Partial<DeviceRegistration> = {}): DeviceRegistration {
  const seed = randomInt(1000);
  const index = randomInt(400_000_000) * 2;
  return {
    imei1: imeiFor(seed, index),
    imei2: imeiFor(seed, index + 1),
    manufacturer: 'Samsung Electronics',
    brand: 'Samsung',
    model: 'Galaxy A15',
    appversion: '3.2.1',
    apptype: 'DEVICE_OWNER',
    retailer_phone: null,
    ...overrides,
  };
}

/**
 * Registers a device on the enrollment secret alone (no key), through the app without a socket: for tests
 * that need a device row, not an agent. Returns the profile and the server's answer.
 */
export async function registerProfile(
  app: FastifyInstance,
  overrides: Partial<DeviceRegistration> = {},
): Promise<{ profile: DeviceRegistration; statusCode: number; credential: string }> {
  const profile = randomProfile(overrides);
  const response = await app.inject({
    method: 'POST',
    url: '/device/v1/register',
    headers: { 'x-enrollment-secret': TEST_ENROLLMENT_SECRET },
    payload: profile,
  });
  return { profile, statusCode: response.statusCode, credential: response.json().credential as string };
}

export function simulatedDevice(
  server: DeviceServer,
  options: { failRate?: number; profile?: Partial<DeviceRegistration> } & Partial<
    Pick<DeviceOptions, 'keyless' | 'attest' | 'deviceKey' | 'enrollmentSecret'>
  > = {},
): SimulatedDevice {
  const { profile, failRate, enrollmentSecret, ...rest } = options;
  return new SimulatedDevice(randomProfile(profile), {
    server: server.url,
    enrollmentSecret: enrollmentSecret ?? TEST_ENROLLMENT_SECRET,
    failRate: failRate ?? 0,
    ...rest,
  });
}

export interface DeviceSuite {
  readonly database: TestDatabase;
  readonly server: DeviceServer;
  /** An ADMIN signed in to the server. */
  readonly admin: Session;
  /** Simulated devices to disconnect after the suite. */
  readonly devices: SimulatedDevice[];
}

/**
 * The set-up most device suites share: a test database of `kind`, a listening app on the embedded broker
 * (or `channel`) and a signed-in ADMIN, made before the suite's tests and closed after them (with its
 * devices).
 */
export function deviceSuite(
  kind: DatabaseKind,
  overrides: Partial<Config> = {},
  channel: 'embedded' | 'mosquitto' = 'embedded',
): DeviceSuite {
  let database: TestDatabase | undefined;
  let server: DeviceServer | undefined;
  let admin: Session | undefined;
  const devices: SimulatedDevice[] = [];
  beforeAll(async () => {
    database = await openTestDatabase(kind);
    server = await startDeviceServer(database, channel, overrides);
    admin = await loginAs(server.app, await buildUser(database, { userlevel: 'ADMIN' }));
  });
  afterAll(async () => {
    await Promise.all(devices.map((d) => d.disconnect().catch(() => {})));
    await server?.close();
    await database?.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the device suite is not set up yet');
    return value;
  };
  return {
    get database() {
      return ready(database);
    },
    get server() {
      return ready(server);
    },
    get admin() {
      return ready(admin);
    },
    devices,
  };
}
