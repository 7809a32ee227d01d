/**
 * Factories for server tests: `buildConfig`, `buildTestApp`, `buildUser`, `loginAs`.
 */
import { randomBytes } from 'node:crypto';
import type { Session, UserLevel } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app';
import { type Config, loadConfig } from '../src/config';
import { createUser } from '../src/modules/users/service';
import type { TestDatabase } from './db';

export function buildConfig(overrides: Partial<Config> = {}): Config {
  return {
    ...loadConfig({
      DATA_DIR: '/nonexistent',
      WEB_DIST: '/nonexistent-web-dist',
      LOG_LEVEL: 'silent',
      DEMO_DATA: 'off',
      MQTT_PORT: '0',
      MQTT_HOST: '127.0.0.1',
      DISPATCH_INTERVAL: '250ms',
      // Existing suites sign ADMINs in with a password alone; the MFA suites turn the requirement on.
      MFA_REQUIRED_LEVELS: 'none',
      // A signed-in request answered without an authority decision fails (authz/decisions.ts).
      AUTHZ_CHECK: 'enforce',
      // Seals the secrets kept in settings (else a key file would be generated into DATA_DIR).
      SECRETS_KEY: Buffer.alloc(32, 7).toString('base64'),
      // MACs the audit chain's anchors (else DATA_DIR/audit-anchor.key would be generated).
      AUDIT_ANCHOR_KEY: Buffer.alloc(32, 8).toString('base64'),
    }),
    ...overrides,
  };
}

export async function buildTestApp(
  database: TestDatabase,
  overrides: Partial<Config> = {},
): Promise<FastifyInstance> {
  const app = await buildApp({ config: buildConfig(overrides), database, logger: false });
  await app.ready();
  return app;
}

let counter = 0;

export interface TestUser {
  id: number;
  email: string;
  phone: string;
  password: string;
  userlevel: UserLevel;
}

export async function buildUser(
  database: TestDatabase,
  overrides: Partial<Omit<TestUser, 'id'>> & { permissions?: string[]; retailerPhone?: string } = {},
): Promise<TestUser> {
  counter += 1;
  const unique = `${process.pid}${counter}${randomBytes(2).toString('hex')}`;
  const user = {
    email: overrides.email ?? `user${unique}@lendlock.com`,
    // Unique within the process (each test file has a database of its own): the digits of a random part
    // could repeat (12 users once drew the same phone).
    phone:
      overrides.phone ??
      `9${String(process.pid % 10_000).padStart(4, '0')}${String(counter % 100_000).padStart(5, '0')}`,
    password: overrides.password ?? `pw-${randomBytes(6).toString('hex')}`,
    userlevel: overrides.userlevel ?? 'USER',
  };
  const id = await createUser(
    database.db,
    { ...user, permissions: overrides.permissions ?? [], retailerPhone: overrides.retailerPhone ?? null },
    { allowedEmailDomains: ['lendlock.com', 'lendlock.in'], passwordMinLength: 6 },
  );
  return { id, ...user };
}

export async function loginAs(
  app: FastifyInstance,
  user: Pick<TestUser, 'email' | 'password'>,
  headers: Record<string, string> = {},
): Promise<Session> {
  const response = await app.inject({
    method: 'POST',
    url: '/api/login.php',
    headers,
    payload: { email: user.email, password: user.password },
  });
  if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
  return response.json() as Session;
}

/**
 * An integrator API key, generated as Key Management does (the owner's password typed again), for a new
 * user (an ADMIN unless `overrides` says otherwise). Returns the key shown once, its id and its owner.
 */
export async function buildKey(
  app: FastifyInstance,
  database: TestDatabase,
  overrides: Parameters<typeof buildUser>[1] = { userlevel: 'ADMIN' },
  keyName = 'test key',
): Promise<{ id: number; key: string; owner: TestUser; session: Session }> {
  const owner = await buildUser(database, overrides);
  const session = await loginAs(app, owner);
  const response = await app.inject({
    method: 'POST',
    url: '/keyapi/generate_key.php',
    headers: { 'x-api-key': session.token },
    payload: { key_name: keyName, password: owner.password },
  });
  if (response.statusCode !== 200)
    throw new Error(`generate_key failed: ${response.statusCode} ${response.body}`);
  const { id, key } = response.json() as { id: number; key: string };
  return { id, key, owner, session };
}
