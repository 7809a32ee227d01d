import {
  addEnrollmentSecretRequestSchema,
  addEnrollmentSecretResponseSchema,
  ENROLLMENT_MESSAGES,
  listEnrollmentSecretsResponseSchema,
  revokeEnrollmentSecretRequestSchema,
  statusMessageSchema,
} from '@lendlock/contract';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';
import { assertManagesSecrets } from './service';

/**
 * Enrollment secrets: a SUPERADMIN of the lender adds (the secret is shown once), lists and revokes them
 * (a secret admits a device into any retailer: authz/resources/enrollment.ts).
 */
export function enrollmentRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      '/api/v2/enrollmentSecrets',
      { schema: { response: { 200: listEnrollmentSecretsResponseSchema } } },
      async (request) => {
        assertManagesSecrets(requirePrincipal(request));
        return { status: 'success' as const, items: await ctx.enrollment.enrollmentSecrets() };
      },
    );

    app.post(
      '/api/v2/enrollmentSecrets',
      {
        schema: {
          body: addEnrollmentSecretRequestSchema,
          response: { 200: addEnrollmentSecretResponseSchema },
        },
      },
      async (request) => {
        const actor = requirePrincipal(request);
        assertManagesSecrets(actor);
        const added = await ctx.enrollment.addEnrollmentSecret(
          { ...request.body, createdBy: actor.email },
          { actor, address: request.ip },
        );
        const expiresAt = added.expiresAt?.toISOString() ?? null;
        return {
          status: 'success' as const,
          message: ENROLLMENT_MESSAGES.secretAdded(added.name),
          id: added.id,
          name: added.name,
          secret: added.secret,
          expiresAt,
        };
      },
    );

    app.post(
      '/api/v2/enrollmentSecrets/revoke',
      { schema: { body: revokeEnrollmentSecretRequestSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        const actor = requirePrincipal(request);
        assertManagesSecrets(actor);
        const revoked = await ctx.enrollment.revokeEnrollmentSecret({ id: request.body.id }, actor.email, {
          actor,
          address: request.ip,
        });
        return { status: 'success', message: ENROLLMENT_MESSAGES.secretRevoked(revoked.name) };
      },
    );
  };
}
