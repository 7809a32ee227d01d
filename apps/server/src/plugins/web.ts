/**
 * Serves the built console (apps/web/dist), its runtime configuration and the Notify sample file (dated
 * on the day it is asked for). index.html answers every
 * console route (client-side routing) with a per-request CSP nonce for the styles Mantine injects.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import {
  API_BASE,
  dayInTimeZone,
  KEY_API_BASE,
  NOTIFICATION_SAMPLE_FILE,
  notificationSampleCsv,
  type RuntimeConfig,
} from '@lendlock/contract';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isEnvelopedPath } from './envelope';
import { cspWithNonce } from './security';

const NONCE_PLACEHOLDER = /__CSP_NONCE__/g;

export interface WebOptions {
  webDist: string;
  productLabel: string;
  envelopeKey: string;
  allowedEmailDomains: string[];
  passwordMinLength: number;
  clientCode: string;
  /** SESSION_IDLE_TIMEOUT, for the console's warning a minute before a session's idle end. */
  sessionIdleTimeoutMs: number;
  /** The day the Notify sample is dated on when fetched by its path (the console makes its own). */
  reportTimeZone: string;
}

/** Returns the handler for console routes that have no file: index.html, or a 503 when not built. */
export async function registerWeb(
  app: FastifyInstance,
  options: WebOptions,
): Promise<(request: FastifyRequest, reply: FastifyReply) => FastifyReply | null> {
  const runtimeConfig: RuntimeConfig = {
    apiBase: API_BASE,
    keyApiBase: KEY_API_BASE,
    productLabel: options.productLabel,
    envelopeKey: options.envelopeKey,
    sessionCheckIntervalMs: 1000,
    sessionIdleTimeoutMs: options.sessionIdleTimeoutMs,
    allowedEmailDomains: options.allowedEmailDomains,
    passwordMinLength: options.passwordMinLength,
    clientCode: options.clientCode,
  };
  app.get('/config.json', async (_request, reply) => {
    reply.header('cache-control', 'no-store');
    return runtimeConfig;
  });

  const indexPath = join(options.webDist, 'index.html');
  const indexHtml = existsSync(indexPath) ? readFileSync(indexPath, 'utf8') : null;
  const sendIndex = (reply: FastifyReply) => {
    if (indexHtml === null) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The console is not built. Run `npm run build` (or `npm start`, which builds it).');
    }
    const nonce = cspWithNonce(reply);
    return reply
      .type('text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(indexHtml.replace(NONCE_PLACEHOLDER, nonce));
  };

  app.get('/', async (_request, reply) => sendIndex(reply));
  // The Notify sample passes the validation only on the day it is dated: made per request.
  app.get(`/${NOTIFICATION_SAMPLE_FILE}`, async (_request, reply) =>
    reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(
        notificationSampleCsv(dayInTimeZone(options.reportTimeZone) ?? new Date().toISOString().slice(0, 10)),
      ),
  );
  if (indexHtml !== null) {
    await app.register(fastifyStatic, {
      root: options.webDist,
      index: false,
      wildcard: true,
      setHeaders: (reply, path) => {
        reply.header(
          'cache-control',
          path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'public, max-age=300',
        );
      },
    });
  } else {
    app.get('/*', async (_request, reply) => reply.callNotFound());
  }

  return (request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const consoleRoute =
      (request.method === 'GET' || request.method === 'HEAD') &&
      !isEnvelopedPath(path) &&
      !/\.[a-z0-9]+$/i.test(path);
    return consoleRoute ? sendIndex(reply) : null;
  };
}
