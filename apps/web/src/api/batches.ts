/**
 * Batch calls (batches run on the server, not in the tab): the multipart bulk upload of a command
 * (answered in plain JSON), and the `/api/v2/batch/…` calls that follow a batch: its progress,
 * the user's incomplete batch of a feature (the resume card), its per-IMEI results (a selection, in pages),
 * their CSV streamed by the server, pause, resume (Process) and cancel (New Batch); and the batches the
 * user may see (`/api/v2/batches`, the Batches screen). Query keys name every parameter a fetch uses.
 */
import {
  type BatchListItem,
  type BatchListRequest,
  type BatchNotFoundReason,
  type BatchProgress,
  type BatchResult,
  type BatchResultFilter,
  batchListResponseSchema,
  batchProgressResponseSchema,
  batchResultsResponseSchema,
  bulkUploadResponseSchema,
  currentBatchResponseSchema,
  MESSAGES,
} from '@lendlock/contract';
import type { z } from 'zod';
import {
  type ApiCallOptions,
  type ApiClient,
  ApiError,
  type DownloadedFile,
  type FileCallOptions,
} from './client';
import { browserTimeZone } from './timeZone';
import type { UploadProgress } from './xhrFetch';

export type BulkUploadResponse = z.infer<typeof bulkUploadResponseSchema>;

/** The client sends `v2/…` scripts without `.php` (see `scriptPath` in client.ts). */
const v2 = (name: string) => `v2/batch/${name}`;

/** Rows per `batch/results` call when the console reads a whole batch. */
export const RESULTS_PAGE_SIZE = 20_000;

/** Which rows of a batch's results: all, found, not found, or not found for one reason. */
export interface ResultSelection {
  filter: BatchResultFilter;
  reason?: BatchNotFoundReason | undefined;
}

export const batchKeys = {
  all: ['batches'] as const,
  current: (statusOf: string) => [...batchKeys.all, 'current', { statusOf }] as const,
  progress: (batchId: number) => [...batchKeys.all, 'progress', { batchId }] as const,
  /** The pages of one selection of a batch's results. */
  resultPages: (batchId: number, selection: ResultSelection) =>
    [
      ...batchKeys.all,
      'resultPages',
      { batchId, filter: selection.filter, reason: selection.reason ?? null },
    ] as const,
  list: (statusOf: string | null) => [...batchKeys.all, 'list', { statusOf }] as const,
};

type Signal = Pick<ApiCallOptions<unknown>, 'signal'>;

export interface BulkUpload {
  /** The definition's bulk script, e.g. `bulkLockCopy.php`. */
  script: string;
  file: File;
  /** The signed-in email (the server checks it names the session's user). */
  user: string;
  /** bulkGreyCopy: level1 | level2; the credit scripts: default. */
  level?: string;
  /** Reports the bytes sent as the file uploads, so a large CSV shows its progress. */
  onProgress?: (progress: UploadProgress) => void;
  /** What the upload is, in words: /login reports it not sent if the session was lost. */
  sending?: string;
}

/**
 * Uploads a batch CSV as multipart `file`, `user` (and `level`), with the browser's `timeZone`: the server
 * validates it again, judging dated rows (Notify's Pre, Post, Due) by the day the operator sees, as the
 * preview did.
 */
export function uploadBatch(api: ApiClient, upload: BulkUpload): Promise<BulkUploadResponse> {
  const form = new FormData();
  form.append('file', upload.file, upload.file.name);
  form.append('user', upload.user);
  if (upload.level) form.append('level', upload.level);
  const timeZone = browserTimeZone();
  if (timeZone) form.append('timeZone', timeZone);
  return api.call(upload.script.replace(/\.php$/, ''), {
    body: form,
    parse: (b) => bulkUploadResponseSchema.parse(b),
    onUploadProgress: upload.onProgress,
    sending: upload.sending,
  });
}

export function fetchBatchProgress(
  api: ApiClient,
  batchId: number,
  options: Signal = {},
): Promise<BatchProgress> {
  return api
    .call(v2('progress'), {
      ...options,
      body: { batchId },
      parse: (b) => batchProgressResponseSchema.parse(b),
    })
    .then((reply) => reply.batch);
}

/** The user's latest incomplete batch of a feature (`statusOf`), running or not; null when there is none. */
export function fetchCurrentBatch(
  api: ApiClient,
  statusOf: string,
  options: Signal = {},
): Promise<BatchProgress | null> {
  return api
    .call(v2('current'), {
      ...options,
      body: { statusOf },
      parse: (b) => currentBatchResponseSchema.parse(b),
    })
    .then((reply) => reply.batch);
}

/**
 * Up to `limit` results after S.No. `offset`, in S.No. order, of the selection (all rows by default);
 * `total` is how many rows the selection holds.
 */
export function fetchBatchResults(
  api: ApiClient,
  request: { batchId: number; offset: number; limit: number } & Partial<ResultSelection>,
  options: Signal = {},
): Promise<{ items: BatchResult[]; total: number }> {
  const { reason, ...rest } = request;
  return api.call(v2('results'), {
    ...options,
    body: reason === undefined ? rest : { ...rest, reason },
    parse: (b) => batchResultsResponseSchema.parse(b),
  });
}

/** A page of the batches the user may see, newest first (`next`: the `before` of the page after it). */
export function fetchBatchList(
  api: ApiClient,
  request: BatchListRequest,
  options: Signal = {},
): Promise<{ items: BatchListItem[]; next: number | null }> {
  return api.call('v2/batches', {
    ...options,
    body: request,
    parse: (b) => batchListResponseSchema.parse(b),
  });
}

/**
 * A batch's results (the selection) as the CSV the server streams (`GET /api/v2/batch/export`), saved
 * under the server's name: imei_data.csv, or the Notify results named after the uploaded file.
 */
export function exportBatchResults(
  api: ApiClient,
  request: { batchId: number; fallbackName: string } & ResultSelection,
  options: Omit<FileCallOptions, 'fallbackName'> = {},
): Promise<DownloadedFile> {
  const search = new URLSearchParams({ batchId: String(request.batchId), filter: request.filter });
  if (request.reason) search.set('reason', request.reason);
  return api.file(`${v2('export')}?${search}`, { ...options, fallbackName: request.fallbackName });
}

/** Every result of a batch, read in pages of RESULTS_PAGE_SIZE by the last S.No. seen, up to its total. */
export async function fetchAllBatchResults(
  api: ApiClient,
  batchId: number,
  options: Signal & { pageSize?: number } = {},
): Promise<BatchResult[]> {
  const limit = options.pageSize ?? RESULTS_PAGE_SIZE;
  const all: BatchResult[] = [];
  for (;;) {
    const offset = all.at(-1)?.sno ?? 0;
    const page = await fetchBatchResults(api, { batchId, offset, limit }, { signal: options.signal });
    for (const item of page.items) all.push(item);
    if (page.items.length < limit || all.length >= page.total) return all;
  }
}

function batchAction(name: 'pause' | 'resume' | 'cancel') {
  return (api: ApiClient, batchId: number): Promise<BatchProgress> =>
    api
      .call(v2(name), { body: { batchId }, parse: (b) => batchProgressResponseSchema.parse(b) })
      .then((reply) => reply.batch);
}

/** Stops a running batch after its current chunk; it shows as an incomplete batch to resume. */
export const pauseBatch = batchAction('pause');
/** Process: continues after the last processed IMEI. */
export const resumeBatch = batchAction('resume');
/** New Batch: discards the rest of the batch (rows already processed stay processed). */
export const cancelBatch = batchAction('cancel');

/**
 * A failed bulk upload: a non-success reply's own message; a thrown error 'An error occurred while
 * uploading the file.'.
 */
export function uploadFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  return MESSAGES.uploadError;
}
