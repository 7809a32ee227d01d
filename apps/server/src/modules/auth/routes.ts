import {
  LOGIN_CLIENT_HEADER,
  loginAnswerSchema,
  loginRequestSchema,
  MESSAGES,
  statusMessageSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteContext } from '../../core/context';

export function authRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      '/api/login.php',
      // The session fields login.php answers, or the second step of an account with two-factor
      // authentication on.
      { schema: { body: loginRequestSchema, response: { 200: loginAnswerSchema } } },
      async (request) =>
        ctx.auth.login({
          identifier: request.body.email,
          password: request.body.password,
          client: request.headers[LOGIN_CLIENT_HEADER] === 'superadmin' ? 'superadmin' : 'console',
          address: request.ip,
        }),
    );

    app.post(
      '/api/logout.php',
      { schema: { body: z.unknown().optional(), response: { 200: statusMessageSchema } } },
      async (request) => {
        if (request.principal) await ctx.auth.logout(request.principal, request.ip);
        return { status: 'success', message: MESSAGES.logoutSuccess };
      },
    );
  };
}
