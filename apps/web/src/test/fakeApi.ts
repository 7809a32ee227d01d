/**
 * Fake API clients for the web tests: `fakeApi` answers each call from a function of its script and
 * records the calls (component tests assert on them); `fileApi` is the real client over a fake `fetch`
 * (the file calls' streaming, headers and refusals); `noFile` stands for a file call a test never makes.
 */
import type { Session, WebEnvelopeCodec } from '@lendlock/contract';
import { vi } from 'vitest';
import { type ApiCallOptions, type ApiClient, createApiClient, type DownloadedFile } from '../api/client';

interface RecordedCall {
  script: string;
  options: ApiCallOptions<unknown>;
}

/** A file call a test does not expect. */
export async function noFile(path: string): Promise<DownloadedFile> {
  throw new Error(`unexpected file call ${path}`);
}

/**
 * An ApiClient whose `call` answers `answer(script, body)` (run through the call's parse; a thrown
 * error or a rejected promise is the call's failure) and whose `file` answers `file(path)`.
 */
export function fakeApi(
  answer: (script: string, body: unknown) => unknown,
  file: (path: string) => Promise<DownloadedFile> = noFile,
) {
  const calls: RecordedCall[] = [];
  const files: string[] = [];
  const api: ApiClient = {
    async call<T>(script: string, options: ApiCallOptions<T> = {}): Promise<T> {
      calls.push({ script, options: options as ApiCallOptions<unknown> });
      const reply = await answer(script, options.body);
      return options.parse ? options.parse(reply) : (reply as T);
    },
    file(path) {
      files.push(path);
      return file(path);
    },
  };
  return { api, calls, files };
}

/** Envelopes off: the fake server answers plain JSON. */
const plainCodec: Pick<WebEnvelopeCodec, 'seal' | 'open'> = {
  seal: async (body) => body as Awaited<ReturnType<WebEnvelopeCodec['seal']>>,
  open: (async (envelope: unknown) => envelope) as WebEnvelopeCodec['open'],
};

/** The real client, at `http://console.test/api/`, over a fetch that answers `response` (or throws it). */
export function fileApi(response: Response | Error, session = { token: 'tok-1' } as Session) {
  const requests: { url: string; headers: Headers; method: string; body: unknown }[] = [];
  const fetch = vi.fn(async (url: string | URL | Request, init?: RequestInit) => {
    requests.push({
      url: String(url),
      headers: new Headers(init?.headers),
      method: init?.method ?? 'GET',
      body: init?.body,
    });
    if (response instanceof Error) throw response;
    return response;
  }) as unknown as typeof globalThis.fetch;
  const end = vi.fn();
  const onAuthorizationFailed = vi.fn();
  const api = createApiClient({
    config: { apiBase: 'http://console.test/api/', keyApiBase: 'http://console.test/keyapi/' },
    codec: plainCodec,
    sessions: { get: () => session, end },
    onAuthorizationFailed,
    fetch,
  });
  return { api, requests, end, onAuthorizationFailed };
}
