/**
 * `npm run openapi`: writes docs/openapi.json from the running code's route schemas. The drift test
 * (openapi.test.ts) compares the committed file with what this produces.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildApp } from './app';
import { loadConfig } from './config';
import type { Database } from './db/database';

export const OPENAPI_FILE = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  '../../../docs/openapi.json',
);

/** Builds an app that never touches a database (the document depends on the routes only). */
export async function generateOpenApi(): Promise<string> {
  const config = {
    ...loadConfig({ LOG_LEVEL: 'silent', WEB_DIST: '/nonexistent' }),
    envelopeKey: Buffer.alloc(32).toString('base64'),
    mfaSecretKey: Buffer.alloc(32).toString('base64'),
    webhookSecretKey: Buffer.alloc(32).toString('base64'),
  };
  const offline: Database = {
    db: undefined as never,
    kind: 'pglite',
    ping: async () => {},
    useRole: () => {},
    close: async () => {},
  };
  const app = await buildApp({ config, database: offline, logger: false, deviceChannel: false });
  await app.ready();
  const document = app.swagger();
  await app.close();
  return `${JSON.stringify(document, null, 2)}\n`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  writeFileSync(OPENAPI_FILE, await generateOpenApi());
  console.log(`Wrote ${OPENAPI_FILE}`);
}
