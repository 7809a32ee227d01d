/**
 * Hostile input: random and malformed bodies on every JSON call, broken envelopes, binary files named
 * .csv, oversized and too-long uploads, CR/LF and formula strings. Every route is also fuzzed from its
 * own registered schema with NUL characters, lone surrogates, impossible dates and over-long values
 * (schema-fuzz.ts). Never a 500, always a clear error in the house shape, and nothing stored on a
 * refusal. Log lines keep CR/LF escaped and hold no token or password.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { DATE_MESSAGES, ERROR_CODES, type Session, TEXT_MESSAGES } from '@lendlock/contract';
import { createNodeEnvelopeCodec } from '@lendlock/contract/node';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loggerOptions } from '../src/app';
import { ROUTE_POLICIES } from '../src/authz/policies';
import { BAD_URL_MESSAGE } from '../src/plugins/errors';
import { databaseKinds, fingerprint as fingerprintOf, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildTestApp, buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';
import {
  hostileRequest,
  type OpenApiDocument,
  routeInputs,
  stringLeaves,
  urlOf,
  wireLeaves,
} from './schema-fuzz';

const JSON_ROUTES = Object.keys(ROUTE_POLICIES)
  .filter(
    (key) => key.startsWith('POST /api/') || key.startsWith('PUT /api/') || key.startsWith('POST /keyapi/'),
  )
  // logout.php would end the session the fuzzing uses; bulk uploads are multipart (tested below).
  .filter((key) => !/bulk\w+Copy|(financedImeis|loans|payments)\/upload|logout\.php/.test(key));

const stored = async (database: TestDatabase) => {
  const row = await sql<{
    n: string;
  }>`SELECT (SELECT count(*) FROM users) || '/' || (SELECT count(*) FROM commands) || '/' ||
    (SELECT count(*) FROM batches) || '/' || (SELECT count(*) FROM api_keys) || '/' || (SELECT count(*) FROM financed_imeis) AS n`.execute(
    database.db,
  );
  return row.rows[0]?.n;
};

describe('hostile input', () => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let superadmin: Session;
  let cases = 0;
  let dataDir: string;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    dataDir = mkdtempSync(join(tmpdir(), 'lendlock-hostile-'));
    app = await buildTestApp(database, { uploadMaxBytes: 2 * 1024 * 1024, dataDir });
    await app.ctx.batchWorker.stop();
    superadmin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    console.log(`hostile input: ${cases} cases tried`);
  });

  it('answers random JSON bodies on every call with a clear error, never a 500, storing nothing', async () => {
    const before = await stored(database);
    let keysCreated = 0;
    // Strings of any code units too: NUL characters and lone surrogates anywhere, keys included.
    const binary = fc.anything({ stringUnit: 'binary' });
    const body = fc.oneof(
      fc.anything(),
      binary,
      fc.dictionary(
        fc.constantFrom(
          'imei',
          'action',
          'email',
          'phone',
          'password',
          'permissions',
          'id',
          'status',
          'batchId',
          'report',
          'startdate',
          'enddate',
          'imeilist',
          'token',
          'newPassword',
          'keyId',
          'key_name',
          'payload',
          'transactionId',
        ),
        fc.oneof(fc.anything(), binary),
      ),
    );
    for (const route of JSON_ROUTES) {
      const [method, url] = route.split(' ') as ['POST' | 'PUT', string];
      await fc.assert(
        fc.asyncProperty(body, async (payload) => {
          cases++;
          const response = await app.inject({
            method,
            url,
            headers: { 'x-api-key': superadmin.token, 'content-type': 'application/json' },
            payload: JSON.stringify(payload) ?? 'null',
          });
          expect(response.statusCode, `${route} ${response.body.slice(0, 200)}`).toBeLessThan(500);
          if (route === 'POST /keyapi/generate_key.php' && response.statusCode === 200) {
            // A random dictionary can hold a valid key name: that key is legitimately created.
            const name = (payload as { key_name?: unknown })?.key_name;
            expect(typeof name === 'string' && name.trim().length > 0 && name.trim().length <= 100).toBe(
              true,
            );
            keysCreated++;
          }
          if (response.statusCode >= 400) {
            const json = response.json();
            expect(json.status).toBe('error');
            expect(typeof json.message).toBe('string');
            expect(json.message.length).toBeGreaterThan(0);
          }
        }),
        { numRuns: 15 },
      );
    }
    // Random bodies may legitimately add financed IMEIs (the list is JSON) and keys with a valid name (counted
    // above); users, commands and batches never, and no key beyond those answered 200.
    const [users, commands, batches, keys] = (await stored(database))?.split('/') ?? [];
    const [users0, commands0, batches0, keys0] = before?.split('/') ?? [];
    expect([users, commands, batches]).toEqual([users0, commands0, batches0]);
    expect(Number(keys)).toBe(Number(keys0) + keysCreated);
  });

  it('refuses broken envelopes and non-JSON bodies with 400', async () => {
    const codec = createNodeEnvelopeCodec((await app.inject('/config.json')).json().envelopeKey);
    const sealed = codec.seal({ email: 'a@lendlock.com', password: 'x' });
    const broken = [
      { payload: sealed.payload, transactionId: '00'.repeat(16) },
      { payload: `${sealed.payload.slice(0, -4)}AAAA`, transactionId: sealed.transactionId },
      { payload: '!!!', transactionId: sealed.transactionId },
      { payload: sealed.payload, transactionId: 'xyz' },
    ];
    for (const payload of broken) {
      cases++;
      const response = await app.inject({ method: 'POST', url: '/api/login.php', payload });
      expect(response.statusCode).toBe(400);
      expect(['BAD_ENVELOPE', 'VALIDATION_FAILED']).toContain(response.json().code);
    }
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ minLength: 1, maxLength: 200 }), async (bytes) => {
        cases++;
        const response = await app.inject({
          method: 'POST',
          url: '/api/addUser.php',
          headers: { 'x-api-key': superadmin.token, 'content-type': 'application/json' },
          payload: Buffer.from(bytes),
        });
        expect(response.statusCode).toBeLessThan(500);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses binary or zipped files named .csv, oversized uploads and files over the row limit', async () => {
    const before = await stored(database);
    const upload = async (content: Buffer | string, name = 'devices.csv', type = 'text/csv') => {
      cases++;
      const body = multipart({}, { name, type, content });
      return app.inject({
        method: 'POST',
        url: '/api/bulkLockCopy.php',
        headers: { ...body.headers, 'x-api-key': superadmin.token },
        payload: body.payload,
      });
    };
    const zip = Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0, 0, 0, 0x08, 0, 0xff, 0xfe, 0x00, 0x01, 0x02]);
    const zipped = await upload(zip);
    expect(zipped.statusCode).toBe(400);
    expect(zipped.json().message).toBe('CSV contains incorrect format data.');
    const binary = await upload(Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256)));
    expect(binary.statusCode).toBe(400);
    const big = await upload(`Sno,IMEI1\n${'1,123456789012345\n'.repeat(200_000)}`);
    expect(big.statusCode).toBe(413);
    expect(big.json().message).toBe('The file is larger than the upload limit.');
    const wrongType = await upload('Sno,IMEI1\n', 'devices.csv', 'application/zip');
    expect(wrongType.json().message).toBe('Only CSV files are allowed.');
    const crlf = await upload('Sno,IMEI1\r\n1,"12345678\r\n9012345"\r\n2,=HYPERLINK("x")\r\n');
    expect(crlf.statusCode).toBe(400);
    expect(await stored(database)).toBe(before);
    // Nothing of the refused files stays on disk (uploads.test.ts has each refusal on its own).
    expect(readdirSync(dataDir, { recursive: true }).filter((name) => String(name).includes('.'))).toEqual(
      [],
    );
  });

  it('refuses a 1,000,001-row file with a clear message', { timeout: 120_000 }, async () => {
    const limited = await buildApp({
      config: buildConfig({ uploadMaxBytes: 64 * 1024 * 1024, dataDir }),
      database,
      logger: false,
    });
    try {
      await limited.ready();
      await limited.ctx.batchWorker.stop();
      const imeis = Array.from({ length: 1_000_001 }, (_, i) => String(100000000000000 + i));
      const body = multipart({}, { name: 'huge.csv', type: 'text/csv', content: imeiCsv(imeis) });
      const response = await limited.inject({
        method: 'POST',
        url: '/api/bulkLockCopy.php',
        headers: { ...body.headers, 'x-api-key': superadmin.token },
        payload: body.payload,
      });
      cases++;
      expect(response.statusCode).toBe(400);
      expect(response.json().message).toBe('The file has more than 1,000,000 rows.');
    } finally {
      await limited.close();
    }
  });

  it('keeps CR/LF escaped in log lines and never logs a token or password', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        done();
      },
    });
    const logged = await buildApp({
      config: buildConfig(),
      database,
      logger: { ...(loggerOptions('debug') as object), stream: sink } as never,
      deviceChannel: false,
    });
    try {
      const password = 'Secret\r\nInjected: yes';
      const user = await buildUser(database, { password: 'a-real-password-123' });
      await logged.inject({
        method: 'POST',
        url: '/api/login.php',
        payload: { email: `${user.email}\r\nforged`, password },
      });
      const session = await loginAs(logged, { email: user.email, password: 'a-real-password-123' });
      await logged.inject({
        method: 'POST',
        url: '/api/nothing\r\nforged.php',
        headers: { 'x-api-key': session.token },
      });
      await logged.inject({
        method: 'GET',
        url: '/api/homeData.php',
        headers: { 'x-api-key': session.token },
      });
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) {
        expect(() => JSON.parse(line)).not.toThrow();
        expect(line).not.toContain(session.token);
        expect(line).not.toContain('a-real-password-123');
        expect(line).not.toContain('Secret');
      }
    } finally {
      await logged.close();
    }
  });
});

/** Every route with an input: the spec's calls, the v2 calls, key management and the device's calls. */
const FUZZED_ROUTES = Object.keys(ROUTE_POLICIES)
  .filter((key) => /^(GET|POST|PUT|PATCH|DELETE) \/(api|keyapi|device)\//.test(key))
  // Multipart uploads have their own tests (uploads.test.ts, loans.test.ts); logout.php would end the
  // session in use.
  .filter((key) => !/bulk\w+Copy|(financedImeis|loans|payments)\/upload|logout\.php/.test(key));

/** Every row of the tables a call could write, hashed: a refusal must leave it as it was. */
async function fingerprint(database: TestDatabase): Promise<string> {
  const tables = [
    'users',
    'user_permissions',
    'sessions',
    'api_keys',
    'devices',
    'commands',
    'batches',
    'batch_items',
    'batch_chunks',
    'financed_imeis',
    'password_resets',
    'login_throttle',
    'releases',
    'deenrollments',
    'enrollment_secrets',
    'reregistration_requests',
    'audit_log',
    'loans',
    'loan_instalments',
    'loan_payments',
  ];
  return fingerprintOf(database.db, tables);
}

describe.each(databaseKinds())(
  'hostile strings in every route, from its registered schema, on %s',
  (kind) => {
    let database: TestDatabase;
    let app: FastifyInstance;
    let superadmin: Session;
    let document: OpenApiDocument;

    beforeAll(async () => {
      database = await openTestDatabase(kind);
      app = await buildTestApp(database);
      await app.ctx.batchWorker.stop();
      superadmin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
      document = app.swagger() as unknown as OpenApiDocument;
    });
    afterAll(async () => {
      await app?.close();
      await database?.close();
    });

    it('finds every route in the registered schemas, and a field to put a hostile string in', () => {
      const inputs = routeInputs(document, FUZZED_ROUTES);
      expect(inputs.length).toBeGreaterThan(40);
      for (const input of inputs) {
        const hasInput = Boolean(input.body || input.query || input.params);
        // A GET without parameters takes no input at all; everything else has a body, a query or a path.
        if (input.method !== 'GET') expect(hasInput, input.key).toBe(true);
        if (input.method === 'GET' && hasInput)
          expect(stringLeaves(input).length || wireLeaves(input).length, input.key).toBeGreaterThan(0);
      }
    });

    it('answers NUL, lone surrogates, impossible dates and over-long values with a 4xx in the house shape, storing nothing', {
      timeout: 600_000,
    }, async () => {
      const inputs = routeInputs(document, FUZZED_ROUTES).filter(
        (input) => input.method !== 'GET' || input.query || input.params,
      );
      const tried: Record<string, number> = { nul: 0, surrogate: 0, date: 0, long: 0 };
      for (const input of inputs) {
        const before = await fingerprint(database);
        await fc.assert(
          fc.asyncProperty(hostileRequest(input), async ({ leaf, hostile, values }) => {
            tried[hostile.kind] = (tried[hostile.kind] ?? 0) + 1;
            const response = await app.inject({
              method: input.method as 'GET',
              url: urlOf(input, values),
              headers: { 'x-api-key': superadmin.token, 'content-type': 'application/json' },
              ...(input.method === 'GET' ? {} : { payload: JSON.stringify(values.body ?? {}) }),
            });
            const what = `${input.key} ${leaf.part}.${leaf.path.join('.')} ${hostile.kind}`;
            expect(response.statusCode, `${what} → ${response.body.slice(0, 300)}`).toBeGreaterThanOrEqual(
              400,
            );
            expect(response.statusCode, `${what} → ${response.body.slice(0, 300)}`).toBeLessThan(500);
            const json = response.json();
            expect(json.status, what).toBe('error');
            expect(ERROR_CODES, what).toContain(json.code);
            expect(typeof json.message, what).toBe('string');
            expect(json.message.length, what).toBeGreaterThan(0);
            const field = leaf.path.length > 0 ? leaf.path.join('.') : leaf.part;
            if (hostile.kind === 'nul')
              expect({ what, status: response.statusCode, message: json.message }).toEqual({
                what,
                status: 400,
                message: TEXT_MESSAGES.nul(field),
              });
            if (hostile.kind === 'surrogate')
              expect({ what, status: response.statusCode, message: json.message }).toEqual({
                what,
                status: 400,
                message: TEXT_MESSAGES.surrogate(field),
              });
            // Over its limit: refused by the schema (400), the body limit (413), or for a path parameter
            // longer than the router takes (100 characters), not routed at all (404 'No such call').
            if (hostile.kind === 'long')
              expect(leaf.part === 'params' ? [400, 404] : [400, 413], what).toContain(response.statusCode);
            if (hostile.kind === 'date') expect(response.statusCode, what).toBe(400);
          }),
          { numRuns: 25 },
        );
        expect(await fingerprint(database), `${input.key} changed data`).toBe(before);
      }
      // Every kind was tried, on many routes.
      for (const kind of ['nul', 'surrogate', 'date', 'long']) expect(tried[kind], kind).toBeGreaterThan(10);
    });

    it('refuses an impossible date on each call that takes one, with the field and the day named', async () => {
      const before = await fingerprint(database);
      const day = '2026-02-30';
      const answers = await Promise.all([
        app.inject({
          method: 'POST',
          url: '/api/downloadReports.php',
          headers: { 'x-api-key': superadmin.token },
          payload: { report: 'release', startdate: day, enddate: '2026-03-01' },
        }),
        app.inject({
          method: 'GET',
          url: `/api/v2/reports/export?report=release&startdate=2026-01-01&enddate=${day}`,
          headers: { 'x-api-key': superadmin.token },
        }),
        app.inject({
          method: 'POST',
          url: '/api/v2/audit/search',
          headers: { 'x-api-key': superadmin.token },
          payload: { from: day },
        }),
        app.inject({
          method: 'GET',
          url: `/api/v2/audit/export?to=${day}`,
          headers: { 'x-api-key': superadmin.token },
        }),
      ]);
      expect(answers.map((r) => [r.statusCode, r.json()])).toEqual([
        [
          400,
          {
            status: 'error',
            code: 'VALIDATION_FAILED',
            message: DATE_MESSAGES.notACalendarDay('startdate', day),
          },
        ],
        [
          400,
          {
            status: 'error',
            code: 'VALIDATION_FAILED',
            message: DATE_MESSAGES.notACalendarDay('enddate', day),
          },
        ],
        [
          400,
          {
            status: 'error',
            code: 'VALIDATION_FAILED',
            message: `Invalid from: ${day} is not a day on the calendar.`,
          },
        ],
        [
          400,
          {
            status: 'error',
            code: 'VALIDATION_FAILED',
            message: `Invalid to: ${day} is not a day on the calendar.`,
          },
        ],
      ]);
      expect(await fingerprint(database)).toBe(before);
    });

    it("answers '..' and other non-names of an uploaded file with 400 in the house shape, over a real socket", async () => {
      // app.inject resolves dot segments like a browser; a raw HTTP client sends them as they are.
      const listening = await buildTestApp(database);
      try {
        await listening.listen({ host: '127.0.0.1', port: 0 });
        const { port } = listening.server.address() as AddressInfo;
        const get = (path: string) =>
          new Promise<{ status: number; body: string }>((resolve, reject) => {
            const req = httpRequest(
              { host: '127.0.0.1', port, path, headers: { 'x-api-key': superadmin.token } },
              (res) => {
                const chunks: Buffer[] = [];
                res.on('data', (chunk: Buffer) => chunks.push(chunk));
                res.on('end', () =>
                  resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
                );
              },
            );
            req.on('error', reject);
            req.end();
          });
        for (const [path, message] of [
          ['/api/v2/uploads/lockfiles/..', 'Invalid file: must be the name of an uploaded file'],
          ['/api/v2/uploads/lockfiles/.', 'Invalid file: must be the name of an uploaded file'],
          ['/api/v2/uploads/lockfiles/.hidden', 'Invalid file: must be the name of an uploaded file'],
          ['/api/v2/uploads/lockfiles/%2e%2e', 'Invalid file: must be the name of an uploaded file'],
          [
            '/api/v2/uploads/lockfiles/..%2f..%2fpgdata',
            'Invalid file: must be the name of an uploaded file',
          ],
          ['/api/v2/uploads/../../etc/passwd', null],
          ['/api/v2/uploads/lockfiles/a%00b.csv', TEXT_MESSAGES.nul('file')],
          ['/api/v2/uploads/lockfiles/%ED%A0%80', BAD_URL_MESSAGE],
        ] as const) {
          const answer = await get(path);
          expect(answer.status, path).toBeGreaterThanOrEqual(400);
          expect(answer.status, path).toBeLessThan(500);
          const json = JSON.parse(answer.body);
          expect(json.status, path).toBe('error');
          expect(ERROR_CODES, path).toContain(json.code);
          if (message)
            expect({ path, status: answer.status, message: json.message }).toEqual({
              path,
              status: 400,
              message,
            });
        }
      } finally {
        await listening.close();
      }
    });
  },
);
