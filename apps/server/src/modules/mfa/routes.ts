/**
 * Two-factor authentication calls (beside the spec's, under `/api/v2/`): the second sign-in step, the
 * signed-in account's status and enrolment, and User Management's list and reset.
 */
import {
  mfaConfirmRequestSchema,
  mfaConfirmResponseSchema,
  mfaEnrolmentResponseSchema,
  mfaResetRequestSchema,
  mfaStatusResponseSchema,
  mfaUsersResponseSchema,
  mfaVerifyRequestSchema,
  sessionSchema,
  statusMessageSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';

export function mfaRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/api/v2/mfa/verify',
      { schema: { body: mfaVerifyRequestSchema, response: { 200: sessionSchema } } },
      async (request) =>
        ctx.auth.verifySecondStep({
          mfaToken: request.body.mfaToken,
          code: request.body.code,
          recoveryCode: request.body.recoveryCode,
          address: request.ip,
        }),
    );

    app.get(
      '/api/v2/mfa/status',
      { schema: { response: { 200: mfaStatusResponseSchema } } },
      async (request) => ctx.mfa.mfaStatus(requirePrincipal(request)),
    );

    app.post(
      '/api/v2/mfa/enrol/start',
      { schema: { body: z.unknown().optional(), response: { 200: mfaEnrolmentResponseSchema } } },
      async (request) => ctx.mfa.startEnrolment(requirePrincipal(request), request.ip),
    );

    app.post(
      '/api/v2/mfa/enrol/confirm',
      { schema: { body: mfaConfirmRequestSchema, response: { 200: mfaConfirmResponseSchema } } },
      async (request) => ctx.mfa.confirmEnrolment(requirePrincipal(request), request.body.code, request.ip),
    );

    app.get('/api/v2/mfa/users', { schema: { response: { 200: mfaUsersResponseSchema } } }, async (request) =>
      ctx.mfa.mfaUsers(requirePrincipal(request)),
    );

    app.post(
      '/api/v2/mfa/reset',
      { schema: { body: mfaResetRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const { status, message } = await ctx.mfa.resetMfa(
          requirePrincipal(request),
          request.body.email,
          request.ip,
        );
        return { status, message };
      },
    );
  };
}
