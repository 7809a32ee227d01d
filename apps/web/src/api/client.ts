/**
 * The one way the console calls the server (spec §7 common rules): `${apiBase}<script>.php`, the body
 * sealed in the envelope, `X-Envelope` on every call, `X-API-Key` with the session token except on the
 * sign-in calls, responses opened from the envelope (or read as plain JSON when they are not one).
 * A reply 'Authorization Failed' / 'Authorization Failed.Invalid' clears the session and goes home (§8).
 */
import {
  ENVELOPE_HEADER,
  ENVELOPE_HEADER_VALUE,
  isEnvelope,
  MESSAGES,
  type RuntimeConfig,
  type WebEnvelopeCodec,
} from '@lendlock/contract';
import type { SessionStore } from '../app/session/store';

export const API_KEY_HEADER = 'X-API-Key';

/** The server answered with a non-2xx status; `message` is the server's own message when it sent one. */
export class ApiError extends Error {
  /** The `message` the server sent, if any (what spec §8 alerts as-is). */
  readonly serverMessage: string | undefined;

  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const serverMessage = readString(body, 'message');
    super(serverMessage ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.serverMessage = serverMessage;
  }

  /** The stable error code of the contract's error response, when there is one. */
  get code(): string | undefined {
    return readString(this.body, 'code');
  }
}

/** The request never got an answer (offline, DNS, connection refused, aborted). */
export class NetworkError extends Error {
  constructor(cause: unknown) {
    super('Network request failed', { cause });
    this.name = 'NetworkError';
  }
}

export interface ApiCallOptions<T> {
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** JSON value to seal in the envelope, or FormData for the multipart uploads (sent as-is). */
  body?: unknown;
  /** Send the session token as X-API-Key (default true; false for login, forgotPassword, reset_password). */
  auth?: boolean;
  /** Token to send instead of the current session's (e.g. ending a session that was just cleared). */
  token?: string;
  /** Clear the session and go home on 'Authorization Failed' (default true). */
  handleAuthorizationFailure?: boolean;
  headers?: Record<string, string>;
  /** Which base path the script lives under (spec §7: key management has its own). */
  base?: 'api' | 'keyApi';
  /** Validates and types the successful response, e.g. `(body) => sessionSchema.parse(body)`. */
  parse?: (body: unknown) => T;
  signal?: AbortSignal;
}

export interface ApiClient {
  /** Calls `<base><script>.php` (`<base>v2/…` as is); `script` is e.g. `login` or `keymanagement/view_keys`. */
  call<T = unknown>(script: string, options?: ApiCallOptions<T>): Promise<T>;
}

/** The spec's calls are `<script>.php`; the calls added beside them live under `v2/` without it. */
export function scriptPath(script: string): string {
  return script.startsWith('v2/') ? script : `${script}.php`;
}

export function isAuthorizationFailure(body: unknown): boolean {
  const message = readString(body, 'message');
  return message === MESSAGES.authorizationFailed || message === MESSAGES.authorizationFailedInvalid;
}

export function createApiClient(deps: {
  config: Pick<RuntimeConfig, 'apiBase' | 'keyApiBase'>;
  codec: Pick<WebEnvelopeCodec, 'seal' | 'open'>;
  sessions: Pick<SessionStore, 'get' | 'clear'>;
  /** Runs after the session was cleared because the server refused the token (the app goes to /). */
  onAuthorizationFailed: () => void;
  fetch?: typeof fetch;
}): ApiClient {
  const doFetch = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));

  const readBody = async (response: Response): Promise<unknown> => {
    const text = await response.text();
    if (text === '') return null;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return text;
    }
    if (!isEnvelope(json)) return json;
    try {
      return await deps.codec.open(json);
    } catch {
      return json;
    }
  };

  return {
    async call<T>(script: string, options: ApiCallOptions<T> = {}): Promise<T> {
      const { body, auth = true, handleAuthorizationFailure = true } = options;
      const base = options.base === 'keyApi' ? deps.config.keyApiBase : deps.config.apiBase;
      const headers: Record<string, string> = {
        Accept: 'application/json',
        [ENVELOPE_HEADER]: ENVELOPE_HEADER_VALUE,
        ...options.headers,
      };
      if (auth) {
        const token = options.token ?? deps.sessions.get()?.token;
        if (token) headers[API_KEY_HEADER] = token;
      }
      let requestBody: BodyInit | undefined;
      if (body instanceof FormData) {
        requestBody = body;
      } else if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        requestBody = JSON.stringify(await deps.codec.seal(body));
      }

      let response: Response;
      try {
        response = await doFetch(`${base}${scriptPath(script)}`, {
          method: options.method ?? (body === undefined ? 'GET' : 'POST'),
          headers,
          body: requestBody,
          credentials: 'same-origin',
          signal: options.signal,
        });
      } catch (error) {
        throw new NetworkError(error);
      }

      const responseBody = await readBody(response);
      if (auth && handleAuthorizationFailure && isAuthorizationFailure(responseBody)) {
        deps.sessions.clear();
        deps.onAuthorizationFailed();
      }
      if (!response.ok) {
        throw new ApiError(response.status, responseBody);
      }
      return options.parse ? options.parse(responseBody) : (responseBody as T);
    },
  };
}

function readString(body: unknown, key: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
