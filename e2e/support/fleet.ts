/** A simulated fleet against a test server (apps/device-sim), and plain-JSON API calls to watch it arrive. */
import { randomBytes } from 'node:crypto';
import { Fleet } from '@lendlock/device-sim';
import { ApiClient } from '@lendlock/testkit';
import { PASSWORD, type TestUser } from './users';

/** The enrollment secret a test server is started with (ENROLLMENT_SECRET), 32 characters. */
export function newEnrollmentSecret(): string {
  return randomBytes(16).toString('hex');
}

/** A seed no other run shares, so each run's IMEIs are its own. */
export function randomSeed(): number {
  return 100 + Math.floor(Math.random() * 800);
}

/** Registers `devices` simulated devices and brings them online. */
export async function startFleet(options: {
  baseUrl: string;
  enrollmentSecret: string;
  devices: number;
  seed: number;
}): Promise<Fleet> {
  const fleet = new Fleet({
    server: options.baseUrl,
    enrollmentSecret: options.enrollmentSecret,
    devices: options.devices,
    seed: options.seed,
  });
  await fleet.start();
  return fleet;
}

/** Signs in over the API (plain JSON, the test kit's client) and returns the session token. */
export async function apiToken(baseUrl: string, user: TestUser): Promise<string> {
  return (await ApiClient.login(baseUrl, { email: user.email, password: PASSWORD })).token;
}

/** A plain-JSON call of the API with a session token: a GET without `body`, else a POST. */
export function apiCall<T>(baseUrl: string, token: string, path: string, body?: unknown): Promise<T> {
  const client = new ApiClient(baseUrl, token);
  return body === undefined ? client.get<T>(path) : client.post<T>(path, body);
}
