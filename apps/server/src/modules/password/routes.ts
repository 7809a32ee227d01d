import {
  forgotPasswordRequestSchema,
  forgotPasswordResponseSchema,
  MESSAGES,
  resetPasswordRequestSchema,
  statusMessageSchema,
  validateForgotPasswordForm,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { AppContext } from '../../app';
import { badRequest } from '../../plugins/errors';
import { forgotPassword, type PasswordContext, resetPassword } from './service';

export function passwordRoutes(ctx: AppContext): FastifyPluginAsyncZod {
  return async (app) => {
    const passwordCtx: PasswordContext = {
      db: ctx.db,
      mailer: ctx.mailer,
      publicUrl: ctx.config.publicUrl,
      passwordMinLength: ctx.config.passwordMinLength,
      log: app.log,
      pending: new Set(),
    };
    app.addHook('onClose', async () => {
      await Promise.allSettled([...(passwordCtx.pending ?? [])]);
    });

    app.post(
      '/api/forgotPassword.php',
      { schema: { body: forgotPasswordRequestSchema, response: { 200: forgotPasswordResponseSchema } } },
      async (request) => {
        const problem = validateForgotPasswordForm(request.body.email);
        if (problem) throw badRequest(problem);
        await forgotPassword(passwordCtx, request.body.email, request.ip);
        return { status: 'success' as const, message: MESSAGES.resetLinkSent };
      },
    );

    app.post(
      '/api/reset_password.php',
      { schema: { body: resetPasswordRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await resetPassword(passwordCtx, request.body.token, request.body.newPassword, request.ip);
        return { status: 'success', message: MESSAGES.passwordResetSuccess };
      },
    );
  };
}
