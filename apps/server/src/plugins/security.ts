/**
 * Security headers on every answer, and the console's strict Content-Security-Policy. The headers are
 * computed once (helmet, configured at start) and set on each reply; only the console's HTML page gets
 * a fresh style nonce (see `cspWithNonce`), which Mantine's runtime styles need under the policy.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';
import helmet from 'helmet';

const DIRECTIVES: Record<string, string[]> = {
  'default-src': ["'self'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'", 'data:'],
  'font-src': ["'self'", 'data:'],
  'connect-src': ["'self'"],
  'object-src': ["'none'"],
  'base-uri': ["'self'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

const policy = (extra: Record<string, string[]> = {}) =>
  Object.entries(DIRECTIVES)
    .map(([name, values]) => [name, ...values, ...(extra[name] ?? [])].join(' '))
    .join(';');

/** The policy with a style nonce of its own, for one HTML answer; returns the nonce. */
export function cspWithNonce(reply: FastifyReply): string {
  const nonce = randomBytes(16).toString('hex');
  reply.header('content-security-policy', policy({ 'style-src': [`'nonce-${nonce}'`] }));
  return nonce;
}

export async function registerSecurity(app: FastifyInstance): Promise<void> {
  const headers = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: DIRECTIVES },
    crossOriginEmbedderPolicy: false,
    referrerPolicy: { policy: 'no-referrer' },
  });
  app.addHook('onRequest', (request, reply, done) => {
    headers(request.raw, reply.raw, (error?: unknown) => done(error as Error | undefined));
  });
}
