/**
 * Hostile input: random and malformed bodies on every JSON call, broken envelopes, binary files named
 * .csv, oversized and too-long uploads, CR/LF and formula strings. Never a 500, always a clear error, and
 * nothing stored on a refusal. Log lines keep CR/LF escaped and hold no token or password.
 */
import { Writable } from 'node:stream';
import type { Session } from '@lendlock/contract';
import { createNodeEnvelopeCodec } from '@lendlock/contract/node';
import fc from 'fast-check';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp, loggerOptions } from '../src/app';
import { ROUTE_POLICIES } from '../src/authz/policies';
import { openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildTestApp, buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

const JSON_ROUTES = Object.keys(ROUTE_POLICIES)
  .filter(
    (key) => key.startsWith('POST /api/') || key.startsWith('PUT /api/') || key.startsWith('POST /keyapi/'),
  )
  // logout.php would end the session the fuzzing uses; bulk uploads are multipart (tested below).
  .filter((key) => !/bulk\w+Copy|financedImeis\/upload|logout\.php/.test(key));

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

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    app = await buildTestApp(database, { uploadMaxBytes: 2 * 1024 * 1024 });
    await app.ctx.batches.stop();
    superadmin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
    console.log(`hostile input: ${cases} cases tried`);
  });

  it('answers random JSON bodies on every call with a clear error, never a 500, storing nothing', async () => {
    const before = await stored(database);
    let keysCreated = 0;
    const body = fc.oneof(
      fc.anything(),
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
        fc.anything(),
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
  });

  it('refuses a 1,000,001-row file with a clear message', { timeout: 120_000 }, async () => {
    const limited = await buildApp({
      config: buildConfig({ uploadMaxBytes: 64 * 1024 * 1024 }),
      database,
      logger: false,
    });
    try {
      await limited.ready();
      await limited.ctx.batches.stop();
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
