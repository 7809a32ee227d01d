import {
  forgotPasswordRequestSchema,
  forgotPasswordResponseSchema,
  MESSAGES,
  resetPasswordRequestSchema,
  statusMessageSchema,
  validateForgotPasswordForm,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { badRequest } from '../../core/errors';

export function passwordRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    const password = ctx.password;
    app.addHook('onClose', async () => {
      await Promise.allSettled([...password.pending]);
    });
    /** What a forgot-password request still has to do once its answer has been sent. */
    const afterAnswer = new WeakMap<FastifyRequest, () => Promise<void>>();

    app.post(
      '/api/forgotPassword.php',
      {
        schema: { body: forgotPasswordRequestSchema, response: { 200: forgotPasswordResponseSchema } },
        // onResponse runs once the answer has been sent: the account's work cannot delay it.
        onResponse: async (request) => {
          const work = afterAnswer.get(request);
          if (!work) return;
          const done = work().catch((error: unknown) =>
            request.log.error({ err: error }, 'forgot-password request failed after its answer'),
          );
          password.pending.add(done);
          void done.finally(() => password.pending.delete(done));
        },
      },
      async (request) => {
        const problem = validateForgotPasswordForm(request.body.email);
        if (problem) throw badRequest(problem);
        afterAnswer.set(request, await password.acceptForgotPassword(request.body.email, request.ip));
        return { status: 'success' as const, message: MESSAGES.resetLinkSent };
      },
    );

    app.post(
      '/api/reset_password.php',
      { schema: { body: resetPasswordRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await password.resetPassword(request.body.token, request.body.newPassword, request.ip);
        return { status: 'success', message: MESSAGES.passwordResetSuccess };
      },
    );
  };
}
