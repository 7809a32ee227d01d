import { createWebEnvelopeCodec, MESSAGES, type Session } from '@lendlock/contract';
import { createNodeEnvelopeCodec } from '@lendlock/contract/node';
import { describe, expect, it, vi } from 'vitest';
import type { SessionEnd } from '../app/session/store';
import { login, logout } from './auth';
import { ApiError, createApiClient, isSessionLost, NetworkError } from './client';

const KEY = Buffer.alloc(32, 3).toString('base64');
const server = createNodeEnvelopeCodec(KEY);
const config = { apiBase: '/api/', keyApiBase: '/keyapi/' };

const session: Session = {
  status: 'success',
  message: 'Login successful',
  expiry: '2099-01-01T00:00:00.000Z',
  token: 'tok-1',
  email: 'admin@lendlock.com',
  userlevel: 'ADMIN',
  loggedin: 'loginValidated',
  permissions: [],
};

interface Recorded {
  url: string;
  method: string;
  headers: Headers;
  body: unknown;
}

async function setup(reply: (request: Recorded) => Response | Promise<Response>) {
  const codec = await createWebEnvelopeCodec(KEY);
  let current: Session | null = session;
  const sessions = {
    get: () => current,
    end: vi.fn((_ending: Partial<SessionEnd>) => {
      current = null;
    }),
  };
  const onAuthorizationFailed = vi.fn();
  const requests: Recorded[] = [];
  const fetch = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const text = typeof init?.body === 'string' ? init.body : undefined;
    const request: Recorded = {
      url: String(input),
      method: init?.method ?? 'GET',
      headers: new Headers(init?.headers),
      body: text === undefined ? undefined : JSON.parse(text),
    };
    requests.push(request);
    return reply(request);
  });
  const api = createApiClient({ config, codec, sessions, onAuthorizationFailed, fetch });
  return { api, sessions, onAuthorizationFailed, requests };
}

const enveloped = (status: number, body: unknown) =>
  new Response(JSON.stringify(server.seal(body)), {
    status,
    headers: { 'Content-Type': 'application/json' },
  });

describe('api client', () => {
  it('seals the body, sends the envelope and API key headers, and opens the enveloped reply', async () => {
    const { api, requests } = await setup(() => enveloped(200, { total_device: 3 }));
    const result = await api.call('homeData', { method: 'POST', body: { imei: '123456789012345' } });

    expect(result).toEqual({ total_device: 3 });
    const [request] = requests;
    expect(request?.url).toBe('/api/homeData.php');
    expect(request?.method).toBe('POST');
    expect(request?.headers.get('x-envelope')).toBe('aes-256-cbc');
    expect(request?.headers.get('x-api-key')).toBe('tok-1');
    expect(server.open(request?.body)).toEqual({ imei: '123456789012345' });
  });

  it('uses the key API base and GET without a body', async () => {
    const { api, requests } = await setup(() => enveloped(200, []));
    await api.call('keymanagement/view_keys', { base: 'keyApi' });
    expect(requests[0]?.url).toBe('/keyapi/keymanagement/view_keys.php');
    expect(requests[0]?.method).toBe('GET');
    expect(requests[0]?.body).toBeUndefined();
  });

  it('login sends no API key, names the superadmin client, and parses the session', async () => {
    const { api, requests } = await setup(() => enveloped(200, session));
    expect(await login(api, { email: 'a@lendlock.com', password: 'pw' }, 'superadmin')).toEqual(session);
    expect(requests[0]?.headers.has('x-api-key')).toBe(false);
    expect(requests[0]?.headers.get('x-login-client')).toBe('superadmin');
    expect(server.open(requests[0]?.body)).toEqual({ email: 'a@lendlock.com', password: 'pw' });

    await login(api, { email: 'a@lendlock.com', password: 'pw' }, 'console');
    expect(requests[1]?.headers.has('x-login-client')).toBe(false);
  });

  it('a login refusal throws ApiError carrying the server message', async () => {
    const body = { status: 'error', code: 'INVALID_CREDENTIALS', message: MESSAGES.loginInvalid };
    const { api, sessions, onAuthorizationFailed } = await setup(() => enveloped(401, body));
    const error = await login(api, { email: 'a', password: 'b' }, 'console').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(401);
    expect((error as ApiError).serverMessage).toBe(MESSAGES.loginInvalid);
    expect((error as ApiError).code).toBe('INVALID_CREDENTIALS');
    expect(sessions.end).not.toHaveBeenCalled();
    expect(onAuthorizationFailed).not.toHaveBeenCalled();
  });

  it.each([MESSAGES.authorizationFailed, MESSAGES.authorizationFailedInvalid])(
    "'%s' ends the session and hands over to onAuthorizationFailed",
    async (message) => {
      const body = { status: 'error', code: 'UNAUTHENTICATED', message };
      const { api, sessions, onAuthorizationFailed } = await setup(() => enveloped(401, body));
      const error = await api.call('getUsers').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(isSessionLost(error)).toBe(true);
      expect(sessions.end).toHaveBeenCalledTimes(1);
      expect(sessions.end).toHaveBeenCalledWith({ reason: null, notSent: null });
      expect(onAuthorizationFailed).toHaveBeenCalledTimes(1);
    },
  );

  it.each([
    ['ended_by_admin', 'ended_by_admin'],
    ['expired', 'expired'],
    ['signed_out', 'signed_out'],
    ['password_reset', 'password_reset'],
    ['idle', 'idle'],
    ['something new', null],
  ] as const)(
    "a 401 with reason '%s' ends the session noting %s, and what the call was sending",
    async (reason, noted) => {
      const body = {
        status: 'error',
        code: 'UNAUTHENTICATED',
        message: MESSAGES.authorizationFailed,
        reason,
      };
      const { api, sessions } = await setup(() => enveloped(401, body));
      const sending = 'Lock to IMEI 356000000000001';
      await expect(api.call('locknotification', { body: {}, sending })).rejects.toBeInstanceOf(ApiError);
      expect(sessions.end).toHaveBeenCalledWith({ reason: noted, notSent: sending });
    },
  );

  it("a call the server answered records the session's use; an Authorization Failed does not", async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const sessions = { get: () => session, end: vi.fn() };
    const markUsed = vi.fn();
    const failed = { status: 'error', code: 'UNAUTHENTICATED', message: MESSAGES.authorizationFailed };
    const answers = [enveloped(200, { status: 'success' }), enveloped(403, {}), enveloped(401, failed)];
    const api = createApiClient({
      config,
      codec,
      sessions,
      onAuthorizationFailed: vi.fn(),
      activity: { markUsed },
      fetch: vi.fn(async () => answers.shift() as Response),
    });
    const before = Date.now();
    await api.call('homeData');
    expect(markUsed).toHaveBeenCalledTimes(1);
    expect(markUsed.mock.calls[0]?.[0]).toBeGreaterThanOrEqual(before);
    await api.call('getUsers').catch(() => {});
    expect(markUsed).toHaveBeenCalledTimes(2);
    await api.call('getUsers').catch(() => {});
    expect(markUsed).toHaveBeenCalledTimes(2);
  });

  it('another refusal is not a lost session', async () => {
    const body = { status: 'error', code: 'FORBIDDEN', message: MESSAGES.unauthorised };
    const { api, sessions } = await setup(() => enveloped(403, body));
    const error = await api.call('locknotification', { body: {}, sending: 'x' }).catch((e: unknown) => e);
    expect(isSessionLost(error)).toBe(false);
    expect(sessions.end).not.toHaveBeenCalled();
  });

  it('logout with a given token never triggers the authorization-failure redirect', async () => {
    const body = { status: 'error', code: 'UNAUTHENTICATED', message: MESSAGES.authorizationFailed };
    const { api, sessions, onAuthorizationFailed, requests } = await setup(() => enveloped(401, body));
    await expect(logout(api, { token: 'old' })).rejects.toBeInstanceOf(ApiError);
    expect(requests[0]?.url).toBe('/api/logout.php');
    expect(requests[0]?.method).toBe('POST');
    expect(requests[0]?.headers.get('x-api-key')).toBe('old');
    expect(sessions.end).not.toHaveBeenCalled();
    expect(onAuthorizationFailed).not.toHaveBeenCalled();
  });

  it('reads a reply that is not an envelope as plain JSON', async () => {
    const body = {
      status: 'error',
      code: 'BAD_ENVELOPE',
      message: 'The request envelope could not be decoded.',
    };
    const { api } = await setup(() => new Response(JSON.stringify(body), { status: 400 }));
    const error = (await api.call('getUsers').catch((e: unknown) => e)) as ApiError;
    expect(error.status).toBe(400);
    expect(error.body).toEqual(body);
    expect(error.message).toBe(body.message);
  });

  it('a fetch that throws becomes a NetworkError', async () => {
    const { api } = await setup(() => {
      throw new TypeError('Failed to fetch');
    });
    await expect(api.call('homeData')).rejects.toBeInstanceOf(NetworkError);
  });
});
