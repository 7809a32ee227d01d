/**
 * The document an integrator reads: every operation named, summarised and tagged with its errors, who may
 * call it as the permission table says, multipart bodies for the uploads and the media type of each file.
 * A route added without a row in openapi/operations.ts fails here.
 */
import { COMMAND_DEFINITIONS } from '@lendlock/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROUTE_POLICIES } from '../authz/policies';
import { generateOpenApi } from '../openapi';
import { operationKey } from '../plugins/openapi';
import { OPERATIONS, XLSX } from './operations';

interface Operation {
  operationId?: string;
  summary?: string;
  tags?: string[];
  security?: Record<string, string[]>[];
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>;
}
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
};

let document: Document;
let operations: [string, Operation][];
beforeAll(async () => {
  document = JSON.parse(await generateOpenApi());
  operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]): [string, Operation] => [operationKey(method, path), op]),
  );
});

const ERROR_REF = { $ref: '#/components/schemas/Error' };

describe('OpenAPI operations', () => {
  it('names, summarises and tags every operation, and lists its 4xx and 5xx with the error schema', () => {
    const missing = operations.filter(([key]) => !OPERATIONS[key]).map(([key]) => key);
    expect(missing, 'routes without a row in openapi/operations.ts').toEqual([]);
    for (const [key, op] of operations) {
      expect(op.operationId, key).toMatch(/^[A-Za-z][A-Za-z0-9]*$/);
      expect(op.summary, key).toBeTruthy();
      expect(op.tags, key).toHaveLength(1);
      const errors = Object.keys(op.responses).filter((status) => /^[45]\d\d$/.test(status));
      expect(
        errors.some((s) => s.startsWith('4')),
        key,
      ).toBe(true);
      expect(
        errors.some((s) => s.startsWith('5')),
        key,
      ).toBe(true);
      for (const status of errors) {
        expect(op.responses[status]?.content?.['application/json']?.schema, `${key} ${status}`).toEqual(
          ERROR_REF,
        );
      }
    }
    const ids = operations.map(([, op]) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(document.components.schemas.Error).toMatchObject({ required: ['status', 'code', 'message'] });
  });

  it('has no row for a route that does not exist', () => {
    const documented = new Set(operations.map(([key]) => key));
    expect(Object.keys(OPERATIONS).filter((key) => !documented.has(key))).toEqual([]);
  });

  it('asks no X-API-Key of the public calls and X-Enrollment-Secret of the registration calls', () => {
    const security = Object.fromEntries(operations.map(([key, op]) => [key, op.security]));
    for (const key of [
      'GET /healthz',
      'GET /readyz',
      'POST /api/login.php',
      'POST /api/v2/mfa/verify',
      'POST /api/forgotPassword.php',
      'POST /api/reset_password.php',
    ]) {
      expect(security[key], key).toEqual([]);
    }
    expect(security['POST /device/v1/nonce']).toEqual([{ enrollmentSecret: [] }]);
    expect(security['POST /device/v1/register']).toEqual([{ enrollmentSecret: [] }]);
    expect(document.components.securitySchemes.enrollmentSecret).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Enrollment-Secret',
    });
    // Every other call takes the document's default, X-API-Key: exactly the ones the permission table guards.
    for (const [key, op] of operations) {
      if (ROUTE_POLICIES[key]?.kind !== 'public') expect(op.security, key).toBeUndefined();
      else expect(op.security, key).toBeDefined();
    }
  });

  it('documents the 16 bulk uploads and the financed-IMEI upload as multipart/form-data with a file', () => {
    const scripts = [
      ...new Set(COMMAND_DEFINITIONS.filter((d) => d.batch && d.bulkScript).map((d) => d.bulkScript)),
    ];
    expect(scripts).toHaveLength(16);
    for (const key of [...scripts.map((s) => `POST /api/${s}`), 'POST /api/v2/financedImeis/upload']) {
      const op = operations.find(([k]) => k === key)?.[1];
      const content = op?.requestBody?.content ?? {};
      expect(Object.keys(content), key).toEqual(['multipart/form-data']);
      expect(content['multipart/form-data']?.schema, key).toMatchObject({
        required: ['file'],
        properties: {
          file: { type: 'string', format: 'binary', description: expect.stringContaining('CSV') },
        },
      });
    }
  });

  it('declares the media type of every file it answers', () => {
    const media = (key: string) =>
      Object.keys(operations.find(([k]) => k === key)?.[1].responses['200']?.content ?? {});
    expect(media('GET /api/v2/reports/export')).toEqual([XLSX]);
    expect(media('GET /api/v2/audit/export')).toEqual([XLSX]);
    expect(media('GET /api/v2/auditReport/export')).toEqual([XLSX]);
    expect(media('GET /api/v2/uploads/:feature/:file')).toEqual(['text/csv']);
  });

  it('lists the values of actions and statuses as enums', () => {
    const op = (key: string) =>
      operations.find(([k]) => k === key)?.[1] as unknown as {
        requestBody: {
          content: { 'application/json': { schema: { properties: Record<string, { enum?: string[] }> } } };
        };
        responses: Record<
          string,
          {
            content: {
              'application/json': {
                schema: { properties: Record<string, { properties: Record<string, { enum?: string[] }> }> };
              };
            };
          }
        >;
      };
    const body = (key: string) => op(key).requestBody.content['application/json'].schema.properties;
    expect(body('POST /api/locknotification.php').action?.enum).toEqual(
      expect.arrayContaining(['lock', 'release']),
    );
    expect(body('POST /api/adminlocknotification.php').action?.enum).toEqual(['REBOOT', 'UPDATE']);
    const command = op('POST /api/v2/commandStatus').responses['200']?.content['application/json'].schema
      .properties.command;
    expect(command?.properties.status?.enum).toEqual(
      expect.arrayContaining(['QUEUED', 'EXECUTED', 'EXPIRED']),
    );
    expect(command?.properties.command?.enum).toEqual(expect.arrayContaining(['LOCK', 'RELEASE']));
  });
});
