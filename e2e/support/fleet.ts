/** A simulated fleet against a test server (apps/device-sim), and plain-JSON API calls to watch it arrive. */
import { randomBytes } from 'node:crypto';
import { Fleet } from '@lendlock/device-sim';
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

/** Signs in over the API (plain JSON) and returns the session token. */
export async function apiToken(baseUrl: string, user: TestUser): Promise<string> {
  const response = await fetch(`${baseUrl}/api/login.php`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: PASSWORD }),
  });
  const body = (await response.json()) as { token?: string; message?: string };
  if (!response.ok || !body.token) throw new Error(`login failed: ${response.status} ${body.message ?? ''}`);
  return body.token;
}

/** A plain-JSON call of the API with a session token. */
export async function apiCall<T>(baseUrl: string, token: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'x-api-key': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  return (await response.json()) as T;
}

/** Polls `check` until it holds (every 200 ms), failing after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`not within ${timeoutMs} ms: ${what}`);
}
