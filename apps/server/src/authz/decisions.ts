/**
 * Every request that reaches an object decides, in the authority module, whether its principal may
 * (authz/index.ts `may`, `authorize`, `scopeFor`, `noObjectTouched`). This file counts the decisions
 * of the request running now and, when AUTHZ_CHECK asks, refuses to answer a signed-in request that
 * succeeded without one: a route or service that forgot to ask fails in tests instead of leaking in
 * production (FleetDM's authzcheck middleware does the same).
 *
 * - `enforce` (the tests): the request answers 500 with the house message, and the log names the route.
 * - `log`: the answer goes out; the log names the route (an operator's canary in development).
 * - `off` (the default): nothing is counted.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { INTERNAL_MESSAGE } from '../core/errors';

export type AuthorizationCheck = 'off' | 'log' | 'enforce';

/** One decision: the resource, the action, and whether it was allowed. */
export interface Decision {
  readonly resource: string;
  readonly action: string;
  readonly allowed: boolean;
}

const current = new AsyncLocalStorage<Decision[]>();

declare module 'fastify' {
  interface FastifyRequest {
    authorizationDecisions: Decision[] | null;
  }
}

/** Records a decision of the request running now (nothing outside a request: jobs, the CLI). */
export function recordDecision(decision: Decision): void {
  current.getStore()?.push(decision);
}

export const NO_DECISION_LOG = 'authorization check not performed';

/**
 * Registers the check. Register it before the envelope and the auth hooks: its onSend must see the
 * plain answer, and the decisions' context must hold for every later hook and the handler.
 */
export function registerAuthorizationCheck(app: FastifyInstance, mode: AuthorizationCheck): void {
  if (mode === 'off') return;
  app.decorateRequest('authorizationDecisions', null);
  // Callback style on purpose: the later hooks and the handler run from `done`, inside the context.
  app.addHook('onRequest', (request, _reply, done) => {
    const decisions: Decision[] = [];
    request.authorizationDecisions = decisions;
    current.run(decisions, done);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!undecided(request, reply.statusCode)) return payload;
    request.log.error({ route: request.routeOptions.url, method: request.method }, NO_DECISION_LOG);
    if (mode !== 'enforce') return payload;
    if (payload && typeof (payload as { destroy?: unknown }).destroy === 'function')
      (payload as { destroy: () => void }).destroy();
    reply.code(500);
    reply.removeHeader('content-length');
    reply.removeHeader('content-disposition');
    reply.header('content-type', 'application/json; charset=utf-8');
    return JSON.stringify({ status: 'error', code: 'INTERNAL', message: INTERNAL_MESSAGE });
  });
}

/** A signed-in request that succeeded without any decision of the authority module. */
function undecided(request: FastifyRequest, statusCode: number): boolean {
  const access = request.routeOptions.config.access as { kind?: string } | undefined;
  if (!access || access.kind === 'public' || !request.principal) return false;
  if (statusCode >= 400) return false;
  return (request.authorizationDecisions?.length ?? 0) === 0;
}
