/**
 * A request sent with XMLHttpRequest and answered as a fetch `Response`, for the uploads whose progress
 * the console shows (a large batch CSV): fetch reports no bytes sent, XMLHttpRequest's
 * `upload` does. The client (client.ts) reads the answer as it reads any other.
 */

/** Bytes of the request body sent so far, of `total`. */
export interface UploadProgress {
  loaded: number;
  total: number;
}

export interface XhrRequest {
  method: string;
  headers: Record<string, string>;
  body: XMLHttpRequestBodyInit | undefined;
  signal?: AbortSignal | undefined;
  onUploadProgress: (progress: UploadProgress) => void;
}

/** Statuses whose Response may carry no body. */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** The `name: value` lines of `getAllResponseHeaders()` as Headers. */
function parseHeaders(raw: string): Headers {
  const headers = new Headers();
  for (const line of raw.trim().split(/[\r\n]+/)) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    try {
      headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
    } catch {
      // a header a Response may not hold
    }
  }
  return headers;
}

/**
 * Sends `request` to `url`; resolves with the answer as a Response (any status), rejects when none came
 * (a TypeError, as fetch does) or with the signal's reason when it was aborted.
 */
export function xhrFetch(
  url: string,
  request: XhrRequest,
  createXhr: () => XMLHttpRequest = () => new XMLHttpRequest(),
): Promise<Response> {
  return new Promise((resolve, reject) => {
    const { signal } = request;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const xhr = createXhr();
    const onAbort = () => xhr.abort();
    const settle = () => signal?.removeEventListener('abort', onAbort);
    xhr.open(request.method, url);
    for (const [name, value] of Object.entries(request.headers)) xhr.setRequestHeader(name, value);
    xhr.upload.addEventListener('progress', (event) => {
      if (event.lengthComputable) request.onUploadProgress({ loaded: event.loaded, total: event.total });
    });
    xhr.addEventListener('load', () => {
      settle();
      const body = NULL_BODY_STATUSES.has(xhr.status) ? null : xhr.responseText;
      try {
        const headers = parseHeaders(xhr.getAllResponseHeaders());
        resolve(new Response(body, { status: xhr.status, statusText: xhr.statusText, headers }));
      } catch (error) {
        // a status a Response cannot have (0 and the like): no answer came
        reject(new TypeError('Network request failed', { cause: error }));
      }
    });
    xhr.addEventListener('error', () => {
      settle();
      reject(new TypeError('Network request failed'));
    });
    xhr.addEventListener('timeout', () => {
      settle();
      reject(new TypeError('Network request timed out'));
    });
    xhr.addEventListener('abort', () => {
      settle();
      reject(signal?.reason ?? new DOMException('The request was aborted.', 'AbortError'));
    });
    signal?.addEventListener('abort', onAbort, { once: true });
    xhr.send(request.body ?? null);
  });
}
