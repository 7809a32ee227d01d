import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError, INTERNAL_MESSAGE } from '../core/errors';
import type { Principal } from '../core/principal';
import { type AuthorizationCheck, registerAuthorizationCheck } from './decisions';
import { authorize, may, mayIfFound, noObjectTouched, scopeFor } from './index';
import { PUBLIC, signedIn as signedInAccess } from './policies';

const retailerAdmin: Principal = {
  credential: 'session',
  userId: 7,
  email: 'admin@retailer.example',
  userlevel: 'ADMIN',
  permissions: new Set(),
  retailerPhone: '9999999999',
};
const signedIn = { access: signedInAccess() };

/** A server with the check, a principal on every request, and routes that decide (or forget to). */
async function server(mode: AuthorizationCheck, logged: string[]): Promise<FastifyInstance> {
  const app = Fastify({
    logger: { level: 'error', stream: { write: (line: string) => logged.push(line) } },
  });
  app.decorateRequest('principal', null);
  registerAuthorizationCheck(app, mode);
  app.addHook('onRequest', async (request) => {
    request.principal = retailerAdmin;
  });
  const lenderUser = { id: 1, userlevel: 'USER' as const, retailerPhone: null };
  app.get('/decides', { config: signedIn }, async (request) => ({
    allowed: may(request.principal as Principal, 'users', 'manage', lenderUser),
  }));
  app.get('/refuses', { config: signedIn }, async (request) => {
    authorize(
      request.principal as Principal,
      'users',
      'manage',
      lenderUser,
      () => new AppError(404, 'NOT_FOUND', 'No such user.'),
    );
    return {};
  });
  app.get('/scopes', { config: signedIn }, async (request) =>
    scopeFor(request.principal as Principal, 'devices'),
  );
  app.get('/says-none', { config: signedIn }, async () => {
    noObjectTouched('a format check');
    return { ok: true };
  });
  app.get('/unknown-object', { config: signedIn }, async (request) => ({
    allowed: mayIfFound(
      request.principal as Principal,
      'devices',
      'read',
      undefined,
      (d: { retailer_phone: null }) => ({
        retailerPhone: d.retailer_phone,
      }),
    ),
  }));
  app.get('/forgets', { config: signedIn }, async () => ({ users: ['everyone'] }));
  app.get('/forgets-after-await', { config: signedIn }, async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    return { users: ['everyone'] };
  });
  app.get('/public-forgets', { config: { access: PUBLIC } }, async () => ({ ok: true }));
  app.get('/bad-input', { config: signedIn }, async (_request, reply) =>
    reply.code(400).send({ message: 'bad' }),
  );
  app.setErrorHandler((error: AppError, _request, reply) =>
    reply.code(error.statusCode ?? 500).send({ message: error.message }),
  );
  await app.ready();
  return app;
}

describe('a signed-in request without an authority decision', () => {
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
  });

  it('is refused with the house 500 under enforce, and the log names the route', async () => {
    const logged: string[] = [];
    app = await server('enforce', logged);
    for (const url of ['/forgets', '/forgets-after-await']) {
      const response = await app.inject({ method: 'GET', url });
      expect([response.statusCode, response.json()]).toEqual([
        500,
        { status: 'error', code: 'INTERNAL', message: INTERNAL_MESSAGE },
      ]);
      expect(response.body).not.toContain('everyone');
    }
    expect(logged.filter((line) => line.includes('authorization check not performed'))).toHaveLength(2);
    expect(logged.join('\n')).toContain('/forgets-after-await');
  });

  it('passes when the request decided: allowed, refused, a scope, or no object said so', async () => {
    app = await server('enforce', []);
    expect((await app.inject({ method: 'GET', url: '/decides' })).json()).toEqual({ allowed: false });
    expect((await app.inject({ method: 'GET', url: '/refuses' })).statusCode).toBe(404);
    expect((await app.inject({ method: 'GET', url: '/scopes' })).json()).toEqual({
      retailerPhone: '9999999999',
    });
    expect((await app.inject({ method: 'GET', url: '/says-none' })).statusCode).toBe(200);
    // An unknown object (or one row-level security hides) is a decision too: refused.
    expect((await app.inject({ method: 'GET', url: '/unknown-object' })).json()).toEqual({ allowed: false });
  });

  it('is not concerned by public routes and refusals of bad input', async () => {
    app = await server('enforce', []);
    expect((await app.inject({ method: 'GET', url: '/public-forgets' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/bad-input' })).statusCode).toBe(400);
  });

  it('only logs under log, and is not counted under off', async () => {
    const logged: string[] = [];
    app = await server('log', logged);
    expect((await app.inject({ method: 'GET', url: '/forgets' })).statusCode).toBe(200);
    expect(logged.some((line) => line.includes('authorization check not performed'))).toBe(true);
    await app.close();
    const quiet: string[] = [];
    app = await server('off', quiet);
    expect((await app.inject({ method: 'GET', url: '/forgets' })).statusCode).toBe(200);
    expect(quiet).toEqual([]);
  });

  it("decides by tenant: a retailer's ADMIN manages none of the lender's users", () => {
    const lender: Principal = { ...retailerAdmin, retailerPhone: null };
    const lenderUser = { id: 1, userlevel: 'USER' as const, retailerPhone: null };
    const retailerUser = { id: 2, userlevel: 'USER' as const, retailerPhone: '9999999999' };
    const otherRetailerUser = { ...retailerUser, retailerPhone: '9888888888' };
    expect(may(retailerAdmin, 'users', 'manage', lenderUser)).toBe(false);
    expect(may(retailerAdmin, 'users', 'manage', otherRetailerUser)).toBe(false);
    expect(may(retailerAdmin, 'users', 'manage', retailerUser)).toBe(true);
    expect(may(lender, 'users', 'manage', retailerUser)).toBe(true);
    expect(may(retailerAdmin, 'users', 'create', { userlevel: 'USER', retailerPhone: null })).toBe(false);
    expect(may(retailerAdmin, 'keys', 'manage', { owner: lenderUser })).toBe(false);
  });
});
