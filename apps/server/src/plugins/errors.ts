/**
 * The typed errors of the server and the one error handler: every failure leaves as
 * `{status: "error", code, message}` with a stable code; 5xx details never reach the client.
 */
import type { ErrorCode } from '@lendlock/contract';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, INTERNAL_MESSAGE } from '../core/errors';

export const UNAVAILABLE_MESSAGE = 'The service is temporarily unavailable. Please try again shortly.';

const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08003',
  '08006',
]);

function isUnavailable(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  // object_not_in_prerequisite_state as a FATAL error refuses the connection ("database … is not
  // currently accepting connections"); as a statement's error (a currval not yet defined) it is a bug.
  if (code === '55000' && (error as { severity?: unknown }).severity === 'FATAL') return true;
  const message = String((error as { message?: unknown }).message ?? '');
  return /Connection terminated|connection timeout|Client has encountered a connection error/i.test(message);
}

interface Reply {
  statusCode: number;
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
}

function classify(error: FastifyError | AppError): Reply {
  if (error instanceof AppError) {
    return {
      statusCode: error.statusCode,
      code: error.code,
      message: error.message,
      headers: error.headers,
      extra: error.extra,
    };
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const issue = error.validation[0];
    const field = issue?.instancePath?.replace(/^\//, '').replaceAll('/', '.') || 'body';
    return {
      statusCode: 400,
      code: 'VALIDATION_FAILED',
      message: `Invalid ${field}: ${issue?.message ?? 'bad value'}`,
    };
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { statusCode: 400, code: 'VALIDATION_FAILED', message: 'The request body is not valid JSON.' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { statusCode: 413, code: 'PAYLOAD_TOO_LARGE', message: 'The request body is too large.' };
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { statusCode: 415, code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Unsupported content type.' };
  }
  if (isUnavailable(error)) return { statusCode: 503, code: 'UNAVAILABLE', message: UNAVAILABLE_MESSAGE };
  const status = typeof error.statusCode === 'number' ? error.statusCode : 500;
  if (status >= 400 && status < 500) {
    if (status === 429) return { statusCode: 429, code: 'RATE_LIMITED', message: error.message };
    return { statusCode: status, code: 'VALIDATION_FAILED', message: 'The request could not be processed.' };
  }
  return { statusCode: 500, code: 'INTERNAL', message: INTERNAL_MESSAGE };
}

export const BAD_URL_MESSAGE = 'The address is not valid: a part of it is wrongly encoded.';

/**
 * Fastify's `frameworkErrors`: failures before routing (a path with a broken percent-encoding) are
 * answered by Fastify itself, in its own shape, unless handed here. They leave in the house shape too.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const out: Reply =
    error.code === 'FST_ERR_BAD_URL'
      ? { statusCode: 400, code: 'VALIDATION_FAILED', message: BAD_URL_MESSAGE }
      : // A path parameter longer than the router takes (100 characters) names no call: as for a GET.
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? {
            statusCode: 404,
            code: 'NOT_FOUND',
            message: `No such call: ${request.method} ${request.url.split('?')[0]}`,
          }
        : classify(error);
  request.log.info({ code: out.code, statusCode: out.statusCode }, out.message);
  void reply.status(out.statusCode).send({ status: 'error', code: out.code, message: out.message });
}

export function registerErrorHandling(
  app: FastifyInstance,
  fallback: (request: FastifyRequest, reply: FastifyReply) => FastifyReply | null = () => null,
): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const out = classify(error);
    if (out.statusCode >= 500) request.log.error({ err: error }, 'request failed');
    else request.log.info({ code: out.code, statusCode: out.statusCode }, out.message);
    for (const [name, value] of Object.entries(out.headers ?? {})) reply.header(name, value);
    return reply
      .status(out.statusCode)
      .send({ ...out.extra, status: 'error', code: out.code, message: out.message });
  });
  app.setNotFoundHandler(
    (request, reply) =>
      fallback(request, reply) ??
      reply.status(404).send({
        status: 'error',
        code: 'NOT_FOUND',
        message: `No such call: ${request.method} ${request.url.split('?')[0]}`,
      }),
  );
}
