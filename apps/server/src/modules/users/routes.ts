import {
  addUserRequestSchema,
  getPermissionsResponseSchema,
  getUsersResponseSchema,
  MESSAGES,
  statusMessageSchema,
  updateLoginStatusRequestSchema,
  updateUserRequestSchema,
  updateUserStatusRequestSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';
import { USER_MESSAGES } from './service';

export function userRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  const actorOf = (request: FastifyRequest) => ({ actor: requirePrincipal(request), address: request.ip });

  return async (app) => {
    app.get(
      '/api/getUsers.php',
      { schema: { response: { 200: getUsersResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.users.getUsers(requirePrincipal(request)),
      }),
    );

    app.get(
      '/api/getPermissions.php',
      { schema: { response: { 200: getPermissionsResponseSchema } } },
      async () => ({
        status: 'success' as const,
        permissions: await ctx.users.getPermissions(),
      }),
    );

    app.post(
      '/api/addUser.php',
      { schema: { body: addUserRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const body = request.body;
        await ctx.users.addUser(actorOf(request), {
          email: body.email,
          phone: body.phone,
          password: body.password,
          permissions: body.permissions,
          userlevel: body.userlevel,
          retailerPhone: body.retailer_phone ?? null,
        });
        return { status: 'success', message: MESSAGES.userAdded };
      },
    );

    app.post(
      '/api/updateUser.php',
      { schema: { body: updateUserRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.users.updateUser(actorOf(request), request.body);
        return { status: 'success', message: MESSAGES.userUpdated };
      },
    );

    app.post(
      '/api/updateUserStatus.php',
      { schema: { body: updateUserStatusRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.users.setUserStatus(actorOf(request), request.body);
        return { status: 'success', message: USER_MESSAGES.statusUpdated(request.body.status) };
      },
    );

    app.post(
      '/api/updateLoginStatus.php',
      { schema: { body: updateLoginStatusRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const { keysDeactivated } = await ctx.users.forceLogout(actorOf(request), request.body);
        return {
          status: 'success',
          message: request.body.deactivateKeys
            ? USER_MESSAGES.loggedOutWithKeys(keysDeactivated.length)
            : USER_MESSAGES.loggedOut,
        };
      },
    );
  };
}
