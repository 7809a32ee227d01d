import {
  appVersionResponseSchema,
  auditRequestSchema,
  auditResponseSchema,
  dashboardChartsSchema,
  dashboardQuerySchema,
  decideReregistrationRequestSchema,
  decideReregistrationResponseSchema,
  deviceDetailsRequestSchema,
  deviceDetailsResponseSchema,
  deviceIdentityRequestSchema,
  deviceIdentityResponseSchema,
  deviceNonceRequestSchema,
  deviceNonceResponseSchema,
  deviceRegistrationResponseSchema,
  deviceRegistrationSchema,
  ENROLLMENT_SECRET_HEADER,
  financedImportRequestSchema,
  financedImportResponseSchema,
  homeDataResponseSchema,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { RouteContext } from '../../core/context';
import { badRequest } from '../../core/errors';
import { requirePrincipal } from '../../core/principal';
import { operatorTimeZone } from '../../lib/timeZone';
import { assertMayImportFinanced, readFinancedCsv } from './financed';

export function deviceRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  return async (app) => {
    // ---- The agent's registration (HTTPS; admitted by an enrollment secret, identified by its key) ----
    const admit = (request: FastifyRequest, kind: 'register' | 'nonce') => {
      const secret = request.headers[ENROLLMENT_SECRET_HEADER];
      return ctx.registration.admit(Array.isArray(secret) ? secret[0] : secret, request.ip, kind);
    };

    app.post(
      '/device/v1/nonce',
      { schema: { body: deviceNonceRequestSchema, response: { 200: deviceNonceResponseSchema } } },
      async (request) => {
        await admit(request, 'nonce');
        const issued = await ctx.registration.issueNonce(request.body.imei1);
        return { status: 'success' as const, nonce: issued.nonce, expiresAt: issued.expiresAt.toISOString() };
      },
    );

    app.post(
      '/device/v1/register',
      { schema: { body: deviceRegistrationSchema, response: { 200: deviceRegistrationResponseSchema } } },
      async (request) => {
        const secretName = await admit(request, 'register');
        const registered = await ctx.registration.register(request.body, { address: request.ip, secretName });
        // A credential issued before no longer admits anyone: its open connections end.
        ctx.commands.credentialRevoked(request.body.imei1);
        return {
          status: 'success' as const,
          registrationstatus: registered.registrationstatus,
          credential: registered.credential,
          mqttUrl: ctx.channel.deviceMqttUrl ?? '',
          clientId: registered.clientId,
          admittedBy: registered.admittedBy,
          keySecurityLevel: registered.keySecurityLevel,
        };
      },
    );

    // ---- A device's identity on Device Details: its key, and registrations waiting for an operator ----
    app.post(
      '/api/v2/deviceIdentity',
      { schema: { body: deviceIdentityRequestSchema, response: { 200: deviceIdentityResponseSchema } } },
      async (request) => ctx.identity.deviceIdentity(requirePrincipal(request), request.body.imei),
    );
    app.post(
      '/api/v2/reregistration/decide',
      {
        schema: {
          body: decideReregistrationRequestSchema,
          response: { 200: decideReregistrationResponseSchema },
        },
      },
      async (request) =>
        ctx.identity.decideReregistration(requirePrincipal(request), request.body, {
          address: request.ip,
          windowMs: ctx.config.reregistrationApprovalWindowMs,
        }),
    );

    // ---- The console's reads ----
    // Counted in the operator's days (the console's time zone, else REPORT_TIMEZONE).
    app.get(
      '/api/homeData.php',
      { schema: { querystring: dashboardQuerySchema, response: { 200: homeDataResponseSchema } } },
      async (request) =>
        ctx.devices.homeData(requirePrincipal(request), operatorTimeZone(ctx.config, request.query.timeZone)),
    );
    app.get(
      '/api/v2/dashboard',
      { schema: { querystring: dashboardQuerySchema, response: { 200: dashboardChartsSchema } } },
      async (request) =>
        ctx.devices.dashboardCharts(
          requirePrincipal(request),
          operatorTimeZone(ctx.config, request.query.timeZone),
        ),
    );

    app.post(
      '/api/devicedetails.php',
      { schema: { body: deviceDetailsRequestSchema, response: { 200: deviceDetailsResponseSchema } } },
      async (request) => {
        const imeis = request.body.imeis ?? [request.body.imei ?? ''];
        return {
          status: 'success' as const,
          ...(await ctx.devices.deviceDetails(requirePrincipal(request), imeis)),
        };
      },
    );

    app.post(
      '/api/auditReportByImei.php',
      { schema: { body: auditRequestSchema, response: { 200: auditResponseSchema } } },
      async (request) => ctx.devices.auditReport(requirePrincipal(request), request.body.imei1),
    );

    app.post(
      '/api/getAppVersionDevices.php',
      { schema: { body: z.unknown().optional(), response: { 200: appVersionResponseSchema } } },
      async (request) => ctx.devices.appVersions(requirePrincipal(request)),
    );

    // ---- The financed-IMEI list that decides Match_Status ----
    const imported = async (
      imeis: string[],
      source: string,
      request: Parameters<typeof requirePrincipal>[0],
    ) => {
      const added = await ctx.devices.importFinancedImeis(requirePrincipal(request), {
        imeis,
        source,
        address: request.ip,
      });
      return { status: 'success' as const, message: `${added} IMEIs added to the financed list`, added };
    };

    app.post(
      '/api/v2/financedImeis',
      { schema: { body: financedImportRequestSchema, response: { 200: financedImportResponseSchema } } },
      async (request) => {
        assertMayImportFinanced(requirePrincipal(request));
        return imported([...new Set(request.body.imeis)], 'api', request);
      },
    );

    app.post(
      '/api/v2/financedImeis/upload',
      { schema: { response: { 200: financedImportResponseSchema } } },
      async (request) => {
        assertMayImportFinanced(requirePrincipal(request));
        const file = await request.file();
        if (!file) throw badRequest('Attach a CSV file as "file".');
        const imeis = await readFinancedCsv(file.file, ctx.config.batchMaxRows);
        if (imeis.length === 0)
          return { status: 'success' as const, message: 'The file has no IMEIs: nothing added.', added: 0 };
        return imported(imeis, 'csv', request);
      },
    );
  };
}
