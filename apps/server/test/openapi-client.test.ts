/**
 * An integrator's client generated from the committed docs/openapi.json (openapi-typescript for the types,
 * openapi-fetch for the calls) compiles with the repository's TypeScript, refuses a wrongly typed call,
 * and calls three endpoints of a running app: /healthz, login.php and a device lookup with an API key.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import type { FastifyInstance } from 'fastify';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../src/openapi';
import { openTestDatabase, type TestDatabase } from './db';
import { buildKey, buildTestApp, buildUser, type TestUser } from './factories';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The integrator's code: typed by the generated `paths`, nothing written by hand about the API. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

export async function callThree(baseUrl: string, user: { email: string; password: string }, apiKey: string) {
  const client = createClient<paths>({ baseUrl });
  const health = await client.GET('/healthz');
  const login = await client.POST('/api/login.php', { body: { email: user.email, password: user.password } });
  const token: string | undefined = login.data && 'token' in login.data ? login.data.token : undefined;
  const lookup = await client.POST('/api/devicedetails.php', {
    body: { imei: '356938035643809' },
    headers: { 'X-API-Key': apiKey },
  });
  const items: unknown[] | undefined = lookup.data?.items;
  const refused = await client.POST('/api/devicedetails.php', { body: { imei: '356938035643809' } });
  const code: string | undefined = refused.error?.code;
  return { health: health.response.status, token, items, refused: refused.response.status, code };
}

export async function wronglyTyped(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  // @ts-expect-error: the generated types know imei is a string
  await client.POST('/api/devicedetails.php', { body: { imei: 356938035643809 } });
  // @ts-expect-error: and that there is no such call
  await client.GET('/api/noSuchCall.php');
}
`;

describe('a client generated from docs/openapi.json', () => {
  let dir: string;
  let database: TestDatabase;
  let app: FastifyInstance;
  let baseUrl: string;
  let user: TestUser;
  let key: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'lendlock-client-'));
    const types = await openapiTS(JSON.parse(readFileSync(OPENAPI_FILE, 'utf8')));
    writeFileSync(join(dir, 'schema.d.ts'), astToString(types));
    writeFileSync(join(dir, 'client.ts'), CLIENT);
    writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }));
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          strict: true,
          target: 'es2022',
          module: 'nodenext',
          moduleResolution: 'nodenext',
          lib: ['es2022', 'dom'],
          types: [],
          noEmit: true,
          skipLibCheck: true,
        },
        files: ['client.ts'],
      }),
    );
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');

    database = await openTestDatabase('pglite');
    app = await buildTestApp(database);
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    user = await buildUser(database, { userlevel: 'ADMIN' });
    ({ key } = await buildKey(app, database));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('compiles with the repository TypeScript, and refuses a wrongly typed call', async () => {
    const result = await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(dir, 'tsconfig.json')],
      { cwd: dir },
    ).catch((error: { stdout?: string; stderr?: string }) => ({
      failed: `${error.stdout ?? ''}${error.stderr ?? ''}`,
    }));
    expect(result).not.toHaveProperty('failed');
  }, 120_000);

  it('calls /healthz, login.php and a device lookup with an API key', async () => {
    const client = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as {
      callThree(
        baseUrl: string,
        user: { email: string; password: string },
        apiKey: string,
      ): Promise<Record<string, unknown>>;
    };
    const answers = await client.callThree(baseUrl, user, key);
    expect(answers).toMatchObject({ health: 200, items: [], refused: 401, code: 'UNAUTHENTICATED' });
    expect(answers.token).toMatch(/\S{20,}/);
  });
});
