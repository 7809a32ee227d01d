/**
 * Who a request is: the principal the auth plugin (plugins/auth.ts) sets on a signed-in request, which
 * routes hand to services and services hand to authz/.
 */
import { MESSAGES, passesEveryPermission, type ScreenName, type UserLevel } from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import { AppError } from './errors';

export interface Principal {
  readonly credential: 'session' | 'key';
  readonly userId: number;
  readonly email: string;
  readonly userlevel: UserLevel;
  readonly permissions: ReadonlySet<string>;
  readonly retailerPhone: string | null;
  /** Set for a session: the hash of its token. */
  readonly sessionTokenHash?: string;
  /** Set for an integrator key. */
  readonly keyId?: number;
}

/** Who acts in a signed-in call, and from which client address (what the audit row records). */
export interface ActorContext {
  actor: Principal;
  address: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function hasPermission(principal: Principal, name: ScreenName): boolean {
  return passesEveryPermission(principal.userlevel) || principal.permissions.has(name);
}

/** The principal of a route whose policy requires sign-in (set by the auth plugin's onRequest hook). */
export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError(401, 'UNAUTHENTICATED', MESSAGES.authorizationFailed);
  return request.principal;
}
