/**
 * The envelope (`{payload, transactionId}`, AES-256-CBC) on the spec's calls (`/api/*.php`, `/keyapi/*`): an
 * enveloped request body is opened before validation; the response is sealed when the request was enveloped
 * or asked for it with `X-Envelope`. Plain JSON (integrators) passes through unchanged.
 */
import {
  ENVELOPE_HEADER,
  ENVELOPE_HEADER_VALUE,
  EnvelopeError,
  isEnvelope,
  MESSAGES,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../core/errors';

declare module 'fastify' {
  interface FastifyRequest {
    wantsEnvelope: boolean;
  }
}

export function isEnvelopedPath(url: string): boolean {
  return url.startsWith('/api/') || url.startsWith('/keyapi/');
}

export function registerEnvelope(app: FastifyInstance, codec: NodeEnvelopeCodec): void {
  app.decorateRequest('wantsEnvelope', false);

  app.addHook('onRequest', async (request: FastifyRequest) => {
    // Multipart bulk uploads answer plain JSON.
    const multipart = String(request.headers['content-type'] ?? '').startsWith('multipart/');
    request.wantsEnvelope =
      isEnvelopedPath(request.url) &&
      !multipart &&
      request.headers[ENVELOPE_HEADER] === ENVELOPE_HEADER_VALUE;
  });

  app.addHook('preValidation', async (request) => {
    if (!isEnvelopedPath(request.url) || !isEnvelope(request.body)) return;
    try {
      request.body = codec.open(request.body);
      request.wantsEnvelope = true;
    } catch (error) {
      request.wantsEnvelope = false;
      throw new AppError(
        400,
        'BAD_ENVELOPE',
        error instanceof EnvelopeError ? error.message : 'The request envelope could not be decoded.',
      );
    }
  });

  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.wantsEnvelope || typeof payload !== 'string') return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    if (!type.startsWith('application/json')) return payload;
    return JSON.stringify(codec.seal(JSON.parse(payload)));
  });
}

/** The message every unauthenticated call receives. */
export const AUTHORIZATION_FAILED = MESSAGES.authorizationFailed;
