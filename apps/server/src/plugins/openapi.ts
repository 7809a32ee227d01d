/**
 * The integrator documentation: an OpenAPI document generated from the contract's zod schemas (the same
 * ones the routes validate with), completed from the operation table (openapi/operations.ts: operationId,
 * summary, tag, errors, multipart bodies, file answers) and the route permission table (authz/policies.ts:
 * who may call), served at /docs (Swagger UI) and /docs/json, and committed as docs/openapi.json (a test
 * fails when the committed file drifts from the code; `redocly lint` checks it in `npm test`).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { errorResponseSchema } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { policyKey, ROUTE_POLICIES } from '../authz/policies';
import { ERROR_DESCRIPTIONS, OPERATIONS, type Operation, TAGS } from '../openapi/operations';
import { registerDocsOff } from './docs-off';

export const API_DESCRIPTION = `
The Lendlock API: the calls the operator console makes, open to integrators with an API key.

## Authentication: \`X-API-Key\`
Every call carries an \`X-API-Key\` header except the public ones (\`/healthz\`, \`/readyz\`, \`login.php\`,
\`/api/v2/mfa/verify\`, \`forgotPassword.php\`, \`reset_password.php\`) and the device agent's registration
(\`/device/v1/nonce\`, \`/device/v1/register\`), which carries \`X-Enrollment-Secret\` instead. The key is
either a console session token (from \`login.php\`) or an integrator key generated in Key Management. A key
acts with the rights of the user who created it; commands sent with a key are recorded with interface
\`A\`. A missing, expired, ended or deactivated credential gets
\`401 {"status":"error","code":"UNAUTHENTICATED","message":"Authorization Failed"}\`; for a console
session the server knows, a \`reason\` says why it ended (\`ended_by_admin\`, \`expired\`, \`signed_out\`,
\`password_reset\`). A credential without the right gets \`403\` with code \`FORBIDDEN\`. Some calls take a console session only (user
management, key management, enrollment secrets, the audit log): each says so in its description.

## Bodies: plain JSON or the envelope
Integrators may send and receive plain JSON. The console wraps bodies in an envelope kept for wire
compatibility (it is obfuscation, not security: security is TLS and server-side sessions):
\`{"payload": "<base64 AES-256-CBC ciphertext of the JSON>", "transactionId": "<16 random bytes, hex, used as the IV>"}\`
with the key from \`GET /config.json\` (\`envelopeKey\`, base64 of 32 bytes). An enveloped request gets an
enveloped answer; a request with the header \`X-Envelope: aes-256-cbc\` (e.g. a GET) does too.

### Worked example (Node.js)
\`\`\`js
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
const { envelopeKey } = await (await fetch('https://lendlock.example/config.json')).json();
const key = Buffer.from(envelopeKey, 'base64');
const iv = randomBytes(16);
const cipher = createCipheriv('aes-256-cbc', key, iv);
const payload = Buffer.concat([cipher.update(JSON.stringify({ email: 'ops@lendlock.com', password: '…' })), cipher.final()]).toString('base64');
const res = await fetch('https://lendlock.example/api/login.php', {
  method: 'POST', headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ payload, transactionId: iv.toString('hex') }),
});
const env = await res.json();
const decipher = createDecipheriv('aes-256-cbc', key, Buffer.from(env.transactionId, 'hex'));
const session = JSON.parse(Buffer.concat([decipher.update(env.payload, 'base64'), decipher.final()]).toString());
// session.token → send as X-API-Key on later calls
\`\`\`
The same call in plain JSON: \`curl -X POST https://lendlock.example/api/login.php -H 'content-type: application/json' -d '{"email":"ops@lendlock.com","password":"…"}'\`.

## Errors
Every error is \`{"status":"error","code":"<STABLE_CODE>","message":"<text for people>"}\`; codes:
VALIDATION_FAILED, BAD_ENVELOPE, UNAUTHENTICATED, FORBIDDEN, NOT_FOUND, CONFLICT, RATE_LIMITED (with
Retry-After), PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, UNAVAILABLE, INTERNAL, INVALID_CREDENTIALS,
ACCOUNT_DISABLED.
`.trim();

export const SECURITY_SCHEMES = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
  },
  enrollmentSecret: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Enrollment-Secret',
    description:
      'An enrollment secret (ENROLLMENT_SECRET, or one added under Enrollment secrets): admits the device ' +
      'agent’s registration calls. A wrong, expired or revoked secret gets 401.',
  },
} as const;

/** The error body every failure answers (contract: errorResponseSchema). */
const ERROR_SCHEMA = {
  ...z.toJSONSchema(errorResponseSchema, { target: 'draft-2020-12', io: 'input' }),
  $schema: undefined,
  description:
    'Every error. Some add detail beside these three fields (a refused CSV upload: `invalid`, ' +
    '`invalidCount`, `more`).',
  additionalProperties: true,
};

type JsonObject = Record<string, unknown>;
interface OpenApiOperation extends JsonObject {
  responses: Record<string, JsonObject>;
  requestBody?: JsonObject;
  security?: Record<string, string[]>[];
}
interface OpenApiDocument extends JsonObject {
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: JsonObject & { schemas?: JsonObject };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

/** `/api/v2/uploads/{feature}/{file}` → `GET /api/v2/uploads/:feature/:file`, the tables' key. */
export const operationKey = (method: string, path: string) =>
  policyKey(method.toUpperCase(), path.replace(/\{([^}]+)\}/g, ':$1'));

const errorResponse = (status: number): JsonObject => ({
  description: ERROR_DESCRIPTIONS[status] ?? 'An error.',
  ...(status === 429
    ? { headers: { 'Retry-After': { description: 'Seconds to wait.', schema: { type: 'integer' } } } }
    : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});

/** The error statuses of one call: those of its kind (who may call, whether it takes a body) and its own. */
export function errorStatuses(key: string, operation: Operation, hasBody: boolean): number[] {
  const access = ROUTE_POLICIES[key];
  const statuses = new Set([400, 500, 503, ...(operation.errors ?? [])]);
  if (access && access.kind !== 'public') {
    statuses.add(401);
    statuses.add(403);
    // Integrator keys are rate limited (KEY_RATE_LIMIT_PER_MINUTE).
    if (access.credentials.includes('key')) statuses.add(429);
  }
  if (operation.throttled) statuses.add(429);
  if (hasBody) {
    statuses.add(413);
    statuses.add(415);
  }
  return [...statuses].sort((a, b) => a - b);
}

function multipartBody(operation: Operation): JsonObject | undefined {
  const multipart = operation.multipart;
  if (!multipart) return undefined;
  const fields = Object.fromEntries(
    Object.entries(multipart.fields ?? {}).map(([name, field]) => [
      name,
      { type: 'string', description: field.description, ...(field.enum ? { enum: [...field.enum] } : {}) },
    ]),
  );
  return {
    required: true,
    content: {
      'multipart/form-data': {
        schema: {
          type: 'object',
          required: ['file'],
          properties: {
            file: { type: 'string', format: 'binary', description: multipart.file },
            ...fields,
          },
        },
        ...(multipart.fileTypes
          ? { encoding: { file: { contentType: multipart.fileTypes.join(', ') } } }
          : {}),
      },
    },
  };
}

function securityOf(key: string, operation: Operation): Record<string, string[]>[] | undefined {
  if (operation.enrollmentSecret) return [{ enrollmentSecret: [] }];
  if (ROUTE_POLICIES[key]?.kind === 'public') return [];
  return undefined; // the document's default: X-API-Key
}

function describe(key: string, operation: Operation): string | undefined {
  const access = ROUTE_POLICIES[key];
  const sessionOnly =
    access && access.kind !== 'public' && !access.credentials.includes('key')
      ? 'A console session only: an integrator key gets 401.'
      : undefined;
  const text = [operation.description, sessionOnly].filter(Boolean).join('\n\n');
  return text || undefined;
}

/**
 * Completes the generated document from the operation and permission tables. An operation missing from
 * the operation table is left as generated (openapi/operations.test.ts fails on it).
 */
export function completeDocument(document: OpenApiDocument): OpenApiDocument {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const generated = item[method];
      if (!generated) continue;
      const key = operationKey(method, path);
      const operation = OPERATIONS[key];
      if (!operation) continue;
      const requestBody = multipartBody(operation) ?? generated.requestBody;
      const security = securityOf(key, operation);
      const description = describe(key, operation);
      const ok = operation.file
        ? {
            description: operation.file.description,
            headers: {
              'Content-Disposition': {
                description: 'attachment, with the file’s name',
                schema: { type: 'string' },
              },
            },
            content: { [operation.file.mediaType]: { schema: { type: 'string', format: 'binary' } } },
          }
        : {
            ...generated.responses['200'],
            description:
              generated.responses['200']?.description === 'Default Response'
                ? 'Success'
                : generated.responses['200']?.description,
          };
      const errors = Object.fromEntries(
        errorStatuses(key, operation, requestBody !== undefined).map((status) => [
          String(status),
          errorResponse(status),
        ]),
      );
      item[method] = {
        operationId: operation.operationId,
        summary: operation.summary,
        ...(description ? { description } : {}),
        tags: [operation.tag],
        ...generated,
        ...(requestBody ? { requestBody } : {}),
        ...(security ? { security } : {}),
        responses: { ...generated.responses, '200': ok, ...errors },
      };
    }
  }
  document.servers = [{ url: '/', description: 'This server' }];
  document.tags = Object.entries(TAGS).map(([name, description]) => ({ name, description }));
  document.components = {
    ...document.components,
    schemas: { ...document.components.schemas, Error: ERROR_SCHEMA },
  };
  return document;
}

/** `ui: false` (API_DOCS=off): the document is still built (docs/openapi.json), /docs answers 404. */
export async function registerOpenApi(app: FastifyInstance, options: { ui?: boolean } = {}): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Lendlock API', version: '1', description: API_DESCRIPTION },
      components: { securitySchemes: SECURITY_SCHEMES },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
    // An OpenAPI (not Swagger 2) document, as configured above.
    transformObject: (object) =>
      completeDocument(('openapiObject' in object ? object.openapiObject : {}) as OpenApiDocument),
    hideUntagged: false,
  });
  if (options.ui === false) registerDocsOff(app);
  // Under the server's Content-Security-Policy (plugins/security.ts), unrelaxed: the base layout has no top
  // bar, whose Swagger logo is an SVG with an inline <style> that style-src 'self' blocks (e2e/api-docs).
  else
    await app.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: false,
      uiConfig: { layout: 'BaseLayout' },
    });
}
