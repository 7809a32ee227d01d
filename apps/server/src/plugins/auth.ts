/**
 * Authentication (`X-API-Key`: a console session token or an integrator API key) and authorization
 * by the route permission table. Every route must be in the table, or the app does not build.
 */
import { MESSAGES, MFA_MESSAGES, passesEveryPermission, type UserLevel } from '@lendlock/contract';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Access, policyKey, ROUTE_POLICIES } from '../authz/policies';
import { AppError, forbidden } from '../core/errors';
import { hasPermission, type Principal } from '../core/principal';
import { asSystem, withTenant } from '../db/tenant';
import { type Authenticator, isTokenShaped } from '../modules/auth/service';
import { AUTHORIZATION_FAILED } from './envelope';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
  }
}

export const API_KEY_HEADER = 'x-api-key';

export class MissingRoutePolicyError extends Error {
  constructor(readonly route: string) {
    super(`Route "${route}" has no entry in ROUTE_POLICIES (apps/server/src/authz/policies.ts).`);
    this.name = 'MissingRoutePolicyError';
  }
}

function allows(access: Access, principal: Principal): boolean {
  switch (access.kind) {
    case 'public':
    case 'signedIn':
    case 'command':
      return true;
    case 'permission':
      return hasPermission(principal, access.permission);
    case 'admin':
      return passesEveryPermission(principal.userlevel);
    case 'superadmin':
      return principal.userlevel === 'SUPERADMIN';
  }
}

export function registerAuth(
  app: FastifyInstance,
  /** Who a credential is (modules/auth/service.ts `authenticator`). */
  auth: Authenticator,
  policies: Readonly<Record<string, Access>> = ROUTE_POLICIES,
  /** MFA_REQUIRED_LEVELS: their sessions reach only `beforeMfa` routes until two-factor is set up. */
  mfaRequiredLevels: readonly UserLevel[] = [],
): void {
  app.decorateRequest('principal', null);

  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      const key = policyKey(method, route.url);
      const access = policies[key];
      if (!access) throw new MissingRoutePolicyError(key);
      route.config = { ...(route.config ?? {}), access };
    }
  });

  // Authentication runs as the system (sessions and keys are looked up across tenants); the rest of the
  // request, its later hooks and its handler, runs from `done` as the principal's tenant (db/tenant.ts),
  // so that every connection it takes carries that tenant (docs/adr/0011). Callback-style on purpose, as
  // db/priority.ts `registerPriorityRequests`. Public routes run as the system.
  app.addHook('onRequest', (request, _reply, done) => {
    asSystem(() => authorizeRequest(request)).then(
      (principal) => {
        if (!principal) return done();
        request.principal = principal;
        withTenant(principal.retailerPhone, () => done());
      },
      (error: Error) => done(error),
    );
  });

  const authorizeRequest = async (request: FastifyRequest): Promise<Principal | null> => {
    const access = request.routeOptions.config.access;
    if (!access || access.kind === 'public') return null;
    const header = request.headers[API_KEY_HEADER];
    const token = Array.isArray(header) ? header[0] : header;
    const principal = token ? await auth.authenticate(token) : null;
    if (!principal || !access.credentials.includes(principal.credential)) {
      // A console session that stopped working says why, so the console can tell its user.
      const reason = !principal && token && isTokenShaped(token) ? await auth.sessionEndReason(token) : null;
      throw new AppError(401, 'UNAUTHENTICATED', AUTHORIZATION_FAILED, {}, reason ? { reason } : {});
    }
    // A session that signed in with its password only and must set up two-factor authentication: it can
    // set it up and sign out, nothing else. Checked on every request, so a reset or a level now requiring
    // MFA binds sessions already open. Integrator keys are credentials of their own and are not concerned.
    if (
      principal.credential === 'session' &&
      mfaRequiredLevels.includes(principal.userlevel) &&
      !(access.kind === 'signedIn' && access.beforeMfa) &&
      !(await auth.hasConfirmedMfa(principal.userId))
    ) {
      throw new AppError(403, 'MFA_ENROLMENT_REQUIRED', MFA_MESSAGES.enrolmentRequired);
    }
    if (!allows(access, principal)) throw forbidden(MESSAGES.unauthorised);
    // A key's last use is recorded only for a call it was allowed to make.
    if (principal.keyId !== undefined) await auth.recordKeyUse(principal.keyId);
    return principal;
  };
}
