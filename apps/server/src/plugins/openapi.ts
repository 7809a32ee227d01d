/**
 * The integrator documentation: an OpenAPI document generated from the contract's zod schemas (the same
 * ones the routes validate with), served at /docs (Swagger UI) and /docs/json, and committed as
 * docs/openapi.json (a test fails when the committed file drifts from the code).
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';

export const API_DESCRIPTION = `
The Lendlock API: the calls the operator console makes, open to integrators with an API key.

## Authentication: \`X-API-Key\`
Every call except \`login.php\`, \`forgotPassword.php\` and \`reset_password.php\` carries an
\`X-API-Key\` header: either a console session token (from \`login.php\`) or an integrator key
generated in Key Management. A key acts with the rights of the user who created it; commands sent with a
key are recorded with interface \`A\`. A missing, expired, ended or deactivated credential gets
\`401 {"status":"error","code":"UNAUTHENTICATED","message":"Authorization Failed"}\`; a credential
without the right gets \`403\` with code \`FORBIDDEN\`.

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

export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: 'Lendlock API', version: '1', description: API_DESCRIPTION },
      components: {
        securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' } },
      },
      security: [{ apiKey: [] }],
    },
    transform: jsonSchemaTransform,
    hideUntagged: false,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: false });
}
