/**
 * Integrator keys are rate-limited: over the limit a call is refused with 429 and
 * Retry-After before anything is accepted, so no accepted command is ever dropped. Console sessions are
 * not limited here (sign-in has its own throttling). The counters are per instance: with N instances a
 * key gets up to N times the limit.
 */
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../core/errors';

export async function registerKeyRateLimit(app: FastifyInstance, perMinute: number): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    hook: 'preHandler',
    max: perMinute,
    timeWindow: 60_000,
    allowList: (request) => request.principal?.credential !== 'key',
    keyGenerator: (request) => `key:${request.principal?.keyId ?? 'none'}`,
    addHeadersOnExceeding: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
    },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_request, context) =>
      new AppError(
        429,
        'RATE_LIMITED',
        `Too many requests for this API key: at most ${context.max} per minute. Retry after ${Math.ceil(context.ttl / 1000)} s.`,
        {
          'retry-after': String(Math.max(1, Math.ceil(context.ttl / 1000))),
        },
      ),
  });
}
