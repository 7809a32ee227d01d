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
import type { AppContext } from '../../app';
import { requirePrincipal } from '../../plugins/auth';
import { confirmEnrolment, mfaStatus, mfaUsers, resetMfa, startEnrolment, verifySecondStep } from './service';

export function mfaRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  const settings = ctx.authSettings.mfa;
  return async (app) => {
    app.post(
      '/api/v2/mfa/verify',
      { schema: { body: mfaVerifyRequestSchema, response: { 200: sessionSchema } } },
      async (request) =>
        verifySecondStep(ctx.db, ctx.authSettings, {
          mfaToken: request.body.mfaToken,
          code: request.body.code,
          recoveryCode: request.body.recoveryCode,
          address: request.ip,
        }),
    );

    app.get(
      '/api/v2/mfa/status',
      { schema: { response: { 200: mfaStatusResponseSchema } } },
      async (request) => mfaStatus(ctx.db, settings, requirePrincipal(request)),
    );

    app.post(
      '/api/v2/mfa/enrol/start',
      { schema: { body: z.unknown().optional(), response: { 200: mfaEnrolmentResponseSchema } } },
      async (request) => startEnrolment(ctx.db, settings, requirePrincipal(request), request.ip),
    );

    app.post(
      '/api/v2/mfa/enrol/confirm',
      { schema: { body: mfaConfirmRequestSchema, response: { 200: mfaConfirmResponseSchema } } },
      async (request) =>
        confirmEnrolment(ctx.db, settings, requirePrincipal(request), request.body.code, request.ip),
    );

    app.get('/api/v2/mfa/users', { schema: { response: { 200: mfaUsersResponseSchema } } }, async (request) =>
      mfaUsers(ctx.db, requirePrincipal(request)),
    );

    app.post(
      '/api/v2/mfa/reset',
      { schema: { body: mfaResetRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const { status, message } = await resetMfa(
          ctx.db,
          requirePrincipal(request),
          request.body.email,
          request.ip,
        );
        return { status, message };
      },
    );
  };
}
