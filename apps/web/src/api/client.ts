/**
 * The one way the console calls the server: `${apiBase}<script>.php`, the body
 * sealed in the envelope, `X-Envelope` on every call, `X-API-Key` with the session token except on the
 * sign-in calls, responses opened from the envelope (or read as plain JSON when they are not one).
 * A reply 'Authorization Failed' / 'Authorization Failed.Invalid' clears the session and goes home,
 * noting the server's `reason` and what the call was sending, for /login to say: no silent exits.
 * Files (the xlsx exports, the uploaded CSVs) come through the same client: same headers, same refusals.
 */
import {
  ENVELOPE_HEADER,
  ENVELOPE_HEADER_VALUE,
  type InvalidRow,
  isEnvelope,
  MESSAGES,
  type RuntimeConfig,
  rowsRefusalSchema,
  type SessionEndReason,
  sessionEndReasonSchema,
  type WebEnvelopeCodec,
} from '@lendlock/contract';
import type { SessionActivity } from '../app/session/activity';
import type { SessionStore } from '../app/session/store';
import { type UploadProgress, xhrFetch } from './xhrFetch';

export const API_KEY_HEADER = 'X-API-Key';

/** The server answered with a non-2xx status; `message` is the server's own message when it sent one. */
export class ApiError extends Error {
  /** The `message` the server sent, if any (what the console alerts as-is). */
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

/** The server's own message when it refused the request (a 4xx with a message), else `fallback`. */
export function refusalMessage(error: unknown, fallback: string): string {
  return error instanceof ApiError && error.status < 500 && error.serverMessage
    ? error.serverMessage
    : fallback;
}

/**
 * The rows the server refused in a file or list (a batch CSV, loans, payments: 400 VALIDATION_FAILED
 * with `invalid` rows), shown as the browser's own check shows them and in incorrect_data.csv; else null.
 */
export function refusedRows(error: unknown): { invalid: InvalidRow[]; invalidCount: number } | null {
  if (!(error instanceof ApiError)) return null;
  const parsed = rowsRefusalSchema.safeParse(error.body);
  return parsed.success ? { invalid: parsed.data.invalid, invalidCount: parsed.data.invalidCount } : null;
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
  /**
   * What the call sends, in the user's words ('Lock to IMEI 356…'): when the session turns out to have
   * ended, /login reports it not sent.
   */
  sending?: string;
  headers?: Record<string, string>;
  /** Which base path the script lives under (key management has its own). */
  base?: 'api' | 'keyApi';
  /** Validates and types the successful response, e.g. `(body) => sessionSchema.parse(body)`. */
  parse?: (body: unknown) => T;
  signal?: AbortSignal;
  /** Reports the body's bytes sent (a large upload); the call then goes over XMLHttpRequest (xhrFetch.ts). */
  onUploadProgress?: ((progress: UploadProgress) => void) | undefined;
}

export interface FileProgress {
  /** The name the file is saved under. */
  fileName: string;
  /** Bytes received so far. */
  bytes: number;
  /** Rows the file holds (the server's x-total-rows), when it said. */
  totalRows: number | null;
}

export interface DownloadedFile {
  blob: Blob;
  fileName: string;
  totalRows: number | null;
}

export interface FileCallOptions {
  /** The name to save under when the server sends no content-disposition. */
  fallbackName: string;
  signal?: AbortSignal | undefined;
  /** Called as the body streams in (bytes received so far). */
  onProgress?: ((progress: FileProgress) => void) | undefined;
  /** A JSON request body: the file is then POSTed for, the body sealed in the envelope as for `call`. */
  body?: unknown;
}

export interface ApiClient {
  /** Calls `<base><script>.php` (`<base>v2/…` as is); `script` is e.g. `login` or `keymanagement/view_keys`. */
  call<T = unknown>(script: string, options?: ApiCallOptions<T>): Promise<T>;
  /**
   * GETs a file (`v2/…` under the API base, or a server path such as `/api/v2/uploads/…`; POSTs for it
   * when `options.body` is given) with the session token, streaming it and reporting the bytes received. A refusal raises ApiError with the
   * server's message; 'Authorization Failed' ends the session as any call does; an abort rejects with
   * the abort's own error.
   */
  file(path: string, options: FileCallOptions): Promise<DownloadedFile>;
}

/** The spec's calls are `<script>.php`; the calls added beside them live under `v2/` without it. */
export function scriptPath(script: string): string {
  if (script.startsWith('v2/')) return script;
  // A query string (`homeData?timeZone=…`) follows the `.php`.
  const query = script.indexOf('?');
  return query < 0 ? `${script}.php` : `${script.slice(0, query)}.php${script.slice(query)}`;
}

/** Where a call goes: `<base><script>`, or a server path (`/api/…`) on the API base's origin. */
function callUrl(base: string, script: string): string {
  if (!script.startsWith('/')) return `${base}${scriptPath(script)}`;
  return /^[a-z][a-z\d+.-]*:\/\//i.test(base) ? new URL(script, base).toString() : script;
}

/** The file name of a `content-disposition` header (`filename*=UTF-8''…` preferred), or null. */
export function fileNameFromDisposition(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (extended?.[1]) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // fall through to the plain parameter
    }
  }
  const quoted = /filename\s*=\s*"((?:[^"\\]|\\.)*)"/.exec(header);
  if (quoted?.[1]) return quoted[1].replace(/\\(.)/g, '$1');
  const bare = /filename\s*=\s*([^;\s]+)/.exec(header);
  return bare?.[1] ?? null;
}

export function isAuthorizationFailure(body: unknown): boolean {
  const message = readString(body, 'message');
  return message === MESSAGES.authorizationFailed || message === MESSAGES.authorizationFailedInvalid;
}

/** Why the server says the session ended (the 401's `reason`), or null when it does not say. */
export function sessionEndReasonOf(body: unknown): SessionEndReason | null {
  const parsed = sessionEndReasonSchema.safeParse(readString(body, 'reason'));
  return parsed.success ? parsed.data : null;
}

/** The call failed because the session is gone: the client has ended it and /login says why. */
export function isSessionLost(error: unknown): boolean {
  return error instanceof ApiError && isAuthorizationFailure(error.body);
}

export function createApiClient(deps: {
  config: Pick<RuntimeConfig, 'apiBase' | 'keyApiBase'>;
  codec: Pick<WebEnvelopeCodec, 'seal' | 'open'>;
  sessions: Pick<SessionStore, 'get' | 'end'>;
  /** Runs after the session was ended because the server refused the token (the app goes to /). */
  onAuthorizationFailed: () => void;
  /** Told of each call the server answered other than 'Authorization Failed': the session was used. */
  activity?: Pick<SessionActivity, 'markUsed'>;
  fetch?: typeof fetch;
  /** The XMLHttpRequest of the calls that report upload progress. */
  xhr?: () => XMLHttpRequest;
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

  const headersFor = (options: {
    auth?: boolean | undefined;
    token?: string | undefined;
    headers?: Record<string, string> | undefined;
    accept: string;
  }): Record<string, string> => {
    const headers: Record<string, string> = {
      Accept: options.accept,
      [ENVELOPE_HEADER]: ENVELOPE_HEADER_VALUE,
      ...options.headers,
    };
    if (options.auth ?? true) {
      const token = options.token ?? deps.sessions.get()?.token;
      if (token) headers[API_KEY_HEADER] = token;
    }
    return headers;
  };

  /** The server refused the session's token: the session ends, with why and what was not sent. */
  const sessionLost = (body: unknown, sending: string | undefined) => {
    deps.sessions.end({ reason: sessionEndReasonOf(body), notSent: sending ?? null });
    deps.onAuthorizationFailed();
  };

  /** A refusal's body, with 'Authorization Failed' ending the session first. */
  const refusal = async (response: Response, endsSession: boolean): Promise<ApiError> => {
    const body = await readBody(response);
    if (endsSession && isAuthorizationFailure(body)) sessionLost(body, undefined);
    return new ApiError(response.status, body);
  };

  return {
    async call<T>(script: string, options: ApiCallOptions<T> = {}): Promise<T> {
      const { body, auth = true, handleAuthorizationFailure = true } = options;
      const base = options.base === 'keyApi' ? deps.config.keyApiBase : deps.config.apiBase;
      const headers = headersFor({
        auth,
        token: options.token,
        headers: options.headers,
        accept: 'application/json',
      });
      let requestBody: FormData | string | undefined;
      if (body instanceof FormData) {
        requestBody = body;
      } else if (body !== undefined) {
        headers['Content-Type'] = 'application/json';
        requestBody = JSON.stringify(await deps.codec.seal(body));
      }

      let response: Response;
      const startedAt = Date.now();
      const url = callUrl(base, script);
      const method = options.method ?? (body === undefined ? 'GET' : 'POST');
      const { signal, onUploadProgress } = options;
      try {
        response = await (onUploadProgress
          ? xhrFetch(url, { method, headers, body: requestBody, signal, onUploadProgress }, deps.xhr)
          : doFetch(url, { method, headers, body: requestBody, credentials: 'same-origin', signal }));
      } catch (error) {
        throw new NetworkError(error);
      }

      const responseBody = await readBody(response);
      const authorizationFailed = isAuthorizationFailure(responseBody);
      if (auth && handleAuthorizationFailure && authorizationFailed) {
        sessionLost(responseBody, options.sending);
      }
      if (!authorizationFailed) deps.activity?.markUsed(startedAt);
      if (!response.ok) {
        throw new ApiError(response.status, responseBody);
      }
      return options.parse ? options.parse(responseBody) : (responseBody as T);
    },

    async file(path: string, options: FileCallOptions): Promise<DownloadedFile> {
      let response: Response;
      const startedAt = Date.now();
      const headers = headersFor({ accept: '*/*' });
      let body: string | undefined;
      if (options.body !== undefined) {
        headers['Content-Type'] = 'application/json';
        body = JSON.stringify(await deps.codec.seal(options.body));
      }
      try {
        response = await doFetch(callUrl(deps.config.apiBase, path), {
          method: body === undefined ? 'GET' : 'POST',
          headers,
          body,
          credentials: 'same-origin',
          signal: options.signal,
        });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new NetworkError(error);
      }
      if (!response.ok) throw await refusal(response, true);
      deps.activity?.markUsed(startedAt);

      const fileName =
        fileNameFromDisposition(response.headers.get('content-disposition')) ?? options.fallbackName;
      const rowsHeader = response.headers.get('x-total-rows');
      const totalRows = rowsHeader !== null && /^\d+$/.test(rowsHeader) ? Number(rowsHeader) : null;
      const type = response.headers.get('content-type') ?? 'application/octet-stream';
      const chunks: Uint8Array<ArrayBuffer>[] = [];
      let bytes = 0;
      options.onProgress?.({ fileName, bytes, totalRows });
      const reader = response.body?.getReader();
      if (reader) {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          chunks.push(value);
          bytes += value.byteLength;
          options.onProgress?.({ fileName, bytes, totalRows });
        }
      } else {
        const buffer = new Uint8Array(await response.arrayBuffer());
        chunks.push(buffer);
        options.onProgress?.({ fileName, bytes: buffer.byteLength, totalRows });
      }
      return { blob: new Blob(chunks, { type }), fileName, totalRows };
    },
  };
}

function readString(body: unknown, key: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const value = (body as Record<string, unknown>)[key];
  return typeof value === 'string' ? value : undefined;
}
