/**
 * The uploads that report progress go over XMLHttpRequest; the client reads their answers
 * as it reads fetch's: the same headers go out, the same refusals and network failures come back.
 * A fake XMLHttpRequest stands for the browser's.
 */
import { ENVELOPE_HEADER, ENVELOPE_HEADER_VALUE, type Session } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { uploadBatch } from './batches';
import { ApiError, createApiClient, NetworkError } from './client';
import { type UploadProgress, xhrFetch } from './xhrFetch';

type Listener = (event: { lengthComputable: boolean; loaded: number; total: number }) => void;

/** What the page's XMLHttpRequest does, as far as xhrFetch uses it; `answer` decides how it ends. */
class FakeXhr {
  method = '';
  url = '';
  readonly headers: Record<string, string> = {};
  body: unknown;
  status = 0;
  statusText = '';
  responseText = '';
  responseHeaders = '';
  aborted = false;
  private readonly listeners = new Map<string, (() => void)[]>();
  private readonly uploadListeners: Listener[] = [];
  readonly upload = {
    addEventListener: (_type: 'progress', listener: Listener) => this.uploadListeners.push(listener),
  };

  constructor(private readonly answer: (xhr: FakeXhr) => void) {}

  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  addEventListener(type: string, listener: () => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }
  getAllResponseHeaders() {
    return this.responseHeaders;
  }
  send(body: unknown) {
    this.body = body;
    queueMicrotask(() => this.answer(this));
  }
  abort() {
    this.aborted = true;
    this.emit('abort');
  }
  progress(loaded: number, total: number, lengthComputable = true) {
    for (const listener of this.uploadListeners) listener({ lengthComputable, loaded, total });
  }
  reply(status: number, body: unknown, headers = 'content-type: application/json\r\n') {
    this.status = status;
    this.responseText = JSON.stringify(body);
    this.responseHeaders = headers;
    this.emit('load');
  }
  emit(type: string) {
    for (const listener of this.listeners.get(type) ?? []) listener();
  }
}

function clientWith(answer: (xhr: FakeXhr) => void) {
  const made: FakeXhr[] = [];
  const api = createApiClient({
    config: { apiBase: '/api/', keyApiBase: '/keyapi/' },
    codec: { seal: async (value) => value as never, open: (async (envelope: unknown) => envelope) as never },
    sessions: { get: () => ({ token: 'token-1' }) as Session, end: () => undefined },
    onAuthorizationFailed: () => undefined,
    fetch: async () => {
      throw new Error('a call with upload progress must not use fetch');
    },
    xhr: () => {
      const xhr = new FakeXhr(answer);
      made.push(xhr);
      return xhr as unknown as XMLHttpRequest;
    },
  });
  return { api, made };
}

const file = new File(['Sno,IMEI1\r\n1,356938035643809\r\n'], 'locks.csv', { type: 'text/csv' });

describe('an upload with progress', () => {
  it('sends the multipart form with the session headers and reports each progress event', async () => {
    const seen: UploadProgress[] = [];
    const { api, made } = clientWith((xhr) => {
      xhr.progress(10, 40);
      xhr.progress(0, 0, false); // a size the browser does not know yet: not reported
      xhr.progress(40, 40);
      xhr.reply(200, { status: 'success', message: 'Uploaded', batchId: 7, total: 1 });
    });
    const reply = await uploadBatch(api, {
      script: 'bulkLockCopy.php',
      file,
      user: 'ops@lendlock.com',
      onProgress: (progress) => seen.push(progress),
    });
    expect(reply).toEqual({ status: 'success', message: 'Uploaded', batchId: 7, total: 1 });
    expect(seen).toEqual([
      { loaded: 10, total: 40 },
      { loaded: 40, total: 40 },
    ]);
    const [xhr] = made;
    expect(xhr?.method).toBe('POST');
    expect(xhr?.url).toBe('/api/bulkLockCopy.php');
    expect(xhr?.headers['X-API-Key']).toBe('token-1');
    expect(xhr?.headers[ENVELOPE_HEADER]).toBe(ENVELOPE_HEADER_VALUE);
    expect(xhr?.headers['Content-Type']).toBeUndefined(); // the browser sets the multipart boundary
    const form = xhr?.body as FormData;
    expect((form.get('file') as File).name).toBe('locks.csv');
    expect(form.get('user')).toBe('ops@lendlock.com');
  });

  it("a refusal is an ApiError with the server's message", async () => {
    const { api } = clientWith((xhr) => xhr.reply(400, { status: 'error', message: 'A batch is running.' }));
    const error = await uploadBatch(api, {
      script: 'bulkLockCopy.php',
      file,
      user: 'ops@lendlock.com',
      onProgress: () => undefined,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(400);
    expect((error as ApiError).serverMessage).toBe('A batch is running.');
  });

  it('no answer (a network error) is a NetworkError', async () => {
    const { api } = clientWith((xhr) => xhr.emit('error'));
    const error = await api
      .call('bulkLockCopy', { body: new FormData(), onUploadProgress: () => undefined })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
  });

  it('an abort stops the request and rejects with the reason', async () => {
    const controller = new AbortController();
    const xhr = new FakeXhr(() => controller.abort(new Error('stopped')));
    const error = await xhrFetch(
      '/api/x.php',
      {
        method: 'POST',
        headers: {},
        body: 'x',
        signal: controller.signal,
        onUploadProgress: () => undefined,
      },
      () => xhr as unknown as XMLHttpRequest,
    ).catch((e: unknown) => e);
    expect(xhr.aborted).toBe(true);
    expect((error as Error).message).toBe('stopped');
  });

  it('an answer reads as a Response: status, headers and body', async () => {
    const xhr = new FakeXhr((x) =>
      x.reply(201, { ok: true }, 'Content-Type: application/json\r\nX-Total-Rows: 3\r\n'),
    );
    const response = await xhrFetch(
      '/api/x.php',
      { method: 'POST', headers: {}, body: undefined, onUploadProgress: () => undefined },
      () => xhr as unknown as XMLHttpRequest,
    );
    expect(response.status).toBe(201);
    expect(response.headers.get('x-total-rows')).toBe('3');
    expect(await response.json()).toEqual({ ok: true });
  });
});
