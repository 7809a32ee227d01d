import {
  COLLECTIONS_MESSAGES,
  decideReleaseRequestSchema,
  decideReleaseResponseSchema,
  getCollectionsPolicyResponseSchema,
  getKillSwitchResponseSchema,
  imeiParamsSchema,
  listFailuresQuerySchema,
  listFailuresResponseSchema,
  listHoldsQuerySchema,
  listHoldsResponseSchema,
  listPolicyVersionsResponseSchema,
  listReleasesQuerySchema,
  listReleasesResponseSchema,
  listRunsResponseSchema,
  planExportRequestSchema,
  planFileName,
  planRequestSchema,
  planResponseSchema,
  putCollectionsPolicyRequestSchema,
  putCollectionsPolicyResponseSchema,
  putHoldRequestSchema,
  putHoldResponseSchema,
  putKillSwitchRequestSchema,
  putKillSwitchResponseSchema,
  releaseIdParamsSchema,
  statusMessageSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { RouteContext } from '../../core/context';
import { requirePrincipal } from '../../core/principal';
import { attachment } from '../../lib/attachment';

/** Collections on autopilot (ADMIN and SUPERADMIN, a session or a key; who may change what: each aggregate's service.ts). */
export function collectionsRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    const caller = (request: FastifyRequest) => ({ actor: requirePrincipal(request), address: request.ip });
    const base = '/api/v2/collections';

    app.get(
      `${base}/policy`,
      { schema: { response: { 200: getCollectionsPolicyResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        ...(await ctx.collections.policy.get(requirePrincipal(request))),
      }),
    );

    app.put(
      `${base}/policy`,
      {
        schema: {
          body: putCollectionsPolicyRequestSchema,
          response: { 200: putCollectionsPolicyResponseSchema },
        },
      },
      async (request) => {
        const { changed, ...saved } = await ctx.collections.policy.save(caller(request), request.body.policy);
        return {
          status: 'success' as const,
          message: changed
            ? COLLECTIONS_MESSAGES.policySaved(saved.version)
            : COLLECTIONS_MESSAGES.policyUnchanged,
          ...saved,
        };
      },
    );

    app.get(
      `${base}/policy/versions`,
      { schema: { response: { 200: listPolicyVersionsResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.collections.policy.versions(requirePrincipal(request)),
      }),
    );

    app.post(
      `${base}/plan`,
      { schema: { body: planRequestSchema, response: { 200: planResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        ...(await ctx.collections.plan.read(requirePrincipal(request), request.body)),
      }),
    );

    app.post(`${base}/plan/export`, { schema: { body: planExportRequestSchema } }, async (request, reply) => {
      const { date, stream } = await ctx.collections.plan.csv(requirePrincipal(request), request.body);
      return reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', attachment(planFileName(date)))
        .header('cache-control', 'no-store')
        .send(stream);
    });

    app.get(
      `${base}/kill-switch`,
      { schema: { response: { 200: getKillSwitchResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        ...(await ctx.collections.killSwitch.get(requirePrincipal(request))),
      }),
    );

    app.put(
      `${base}/kill-switch`,
      { schema: { body: putKillSwitchRequestSchema, response: { 200: putKillSwitchResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        ...(await ctx.collections.killSwitch.set(caller(request), request.body)),
      }),
    );

    app.get(
      `${base}/failures`,
      { schema: { querystring: listFailuresQuerySchema, response: { 200: listFailuresResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.collections.failures.ofDevice(requirePrincipal(request), request.query.imei),
      }),
    );

    app.get(
      `${base}/holds`,
      { schema: { querystring: listHoldsQuerySchema, response: { 200: listHoldsResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.collections.holds.list(requirePrincipal(request), request.query.imei),
      }),
    );

    app.put(
      `${base}/holds/:imei`,
      {
        schema: {
          params: imeiParamsSchema,
          body: putHoldRequestSchema,
          response: { 200: putHoldResponseSchema },
        },
      },
      async (request) => ({
        status: 'success' as const,
        message: COLLECTIONS_MESSAGES.holdSet,
        hold: await ctx.collections.holds.hold(caller(request), request.params.imei, request.body.reason),
      }),
    );

    app.delete(
      `${base}/holds/:imei`,
      { schema: { params: imeiParamsSchema, response: { 200: statusMessageSchema } } },
      async (request) => {
        await ctx.collections.holds.unhold(caller(request), request.params.imei);
        return { status: 'success', message: COLLECTIONS_MESSAGES.holdRemoved };
      },
    );

    app.get(
      `${base}/releases`,
      { schema: { querystring: listReleasesQuerySchema, response: { 200: listReleasesResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        items: await ctx.collections.releases.list(
          requirePrincipal(request),
          request.query.state,
          request.query.imei,
        ),
      }),
    );

    for (const decision of ['approve', 'reject'] as const)
      app.post(
        `${base}/releases/:id/${decision}`,
        {
          schema: {
            params: releaseIdParamsSchema,
            body: decideReleaseRequestSchema,
            response: { 200: decideReleaseResponseSchema },
          },
        },
        async (request) => {
          const release = await ctx.collections.releases.decide(
            caller(request),
            request.params.id,
            decision,
            request.body.reason,
          );
          return {
            status: 'success' as const,
            message:
              decision === 'approve'
                ? COLLECTIONS_MESSAGES.releaseApproved
                : COLLECTIONS_MESSAGES.releaseRejected,
            release,
          };
        },
      );

    app.get(`${base}/runs`, { schema: { response: { 200: listRunsResponseSchema } } }, async (request) => ({
      status: 'success' as const,
      items: await ctx.collections.runs.recent(requirePrincipal(request)),
    }));
  };
}
