/**
 * Reports and history (spec §7 downloadReports.php) and the `/api/v2/` calls beside it: the streamed xlsx
 * exports (design.md §3.5) and the uploaded files the bulk-upload history links to. The JSON call is paged
 * (offset/limit) and read to the end; the two file calls are read as streams with the session token as
 * X-API-Key, which a plain link cannot send.
 */
import {
  bulkHistoryRowSchema,
  type DownloadReportsRequest,
  deenrollRowSchema,
  downloadReportsResponseSchema,
  type ExecutedCommandRow,
  type ExportPart,
  executedCommandRowSchema,
  exportFileName,
  type RegistrationFilter,
  type ReportKind,
  type RuntimeConfig,
  registrationRowSchema,
  reportTab,
} from '@lendlock/contract';
import { z } from 'zod';
import type { SessionStore } from '../app/session/store';
import {
  API_KEY_HEADER,
  type ApiCallOptions,
  type ApiClient,
  ApiError,
  isAuthorizationFailure,
  NetworkError,
} from './client';

/** Rows asked per downloadReports.php call (the server allows up to 100,000). */
export const REPORT_PAGE_SIZE = 10_000;

/** What a report is asked for: the tab, the inclusive YYYY-MM-DD range and (registrations) the filter. */
export interface ReportQuery {
  report: string;
  startdate: string;
  enddate: string;
  match?: RegistrationFilter;
}

export const reportKeys = {
  all: ['reports'] as const,
  report: (query: ReportQuery) =>
    [
      ...reportKeys.all,
      'report',
      {
        report: query.report,
        startdate: query.startdate,
        enddate: query.enddate,
        match: query.match ?? null,
      },
    ] as const,
};

const ITEM_SCHEMAS = {
  registration: registrationRowSchema,
  deenroll: deenrollRowSchema,
  command: bulkHistoryRowSchema,
} as const;

export type ReportItemRow<K extends ReportKind> = z.infer<(typeof ITEM_SCHEMAS)[K]>;

/** A tab's rows: `items` (registrations, de-enroll records or bulk-upload history) and executed commands. */
export type Report = {
  [K in ReportKind]: {
    kind: K;
    items: ReportItemRow<K>[];
    commands: ExecutedCommandRow[];
    /** The server's message of the first page ('No results found' when there is nothing). */
    message: string;
  };
}[ReportKind];

/** One page of the answer, its rows checked against the tab's row schema. */
function pageSchema(kind: ReportKind) {
  return downloadReportsResponseSchema.extend({
    items: z.array(ITEM_SCHEMAS[kind] as z.ZodType<Record<string, unknown>>),
    commanditems: z.array(executedCommandRowSchema),
  });
}
export type ReportPage = z.infer<ReturnType<typeof pageSchema>>;

/**
 * A reply of status 200 that is not a success (the legacy way to refuse): raised as an ApiError so its
 * message is alerted like any other server message.
 */
function refusal(body: unknown): ApiError | null {
  if (typeof body !== 'object' || body === null) return null;
  const { status, message } = body as { status?: unknown; message?: unknown };
  return status !== 'success' && typeof message === 'string' ? new ApiError(200, body) : null;
}

type Signal = Pick<ApiCallOptions<unknown>, 'signal'>;

function kindOf(report: string): ReportKind {
  const tab = reportTab(report);
  if (!tab) throw new Error(`Unknown report: ${report}`);
  return tab.kind;
}

/** One page: the rows after `offset`, at most `limit`, and the totals. */
export function fetchReportPage(
  api: ApiClient,
  request: ReportQuery & Pick<DownloadReportsRequest, 'offset' | 'limit'>,
  options: Signal = {},
): Promise<ReportPage> {
  const schema = pageSchema(kindOf(request.report));
  return api.call('downloadReports', {
    ...options,
    body: request,
    parse: (body) => {
      const refused = refusal(body);
      if (refused) throw refused;
      return schema.parse(body);
    },
  });
}

/**
 * Whether another page is due after one that ended at `nextOffset`: the totals say there are more rows
 * and the page was full on at least one side (a short page on both ends the report whatever the totals
 * said, so rows removed meanwhile never make it loop).
 */
export function hasMorePages(
  nextOffset: number,
  page: Pick<ReportPage, 'items' | 'commanditems' | 'total_items' | 'total_commanditems' | 'limit'>,
): boolean {
  const total = Math.max(page.total_items, page.total_commanditems);
  const full = page.items.length >= page.limit || page.commanditems.length >= page.limit;
  return nextOffset < total && full;
}

export interface ReportLoadProgress {
  loaded: number;
  total: number;
}

/** Every row of a report, page after page until the totals are reached (large results are never cut). */
export async function fetchReport(
  api: ApiClient,
  query: ReportQuery,
  options: Signal & { pageSize?: number; onProgress?: (progress: ReportLoadProgress) => void } = {},
): Promise<Report> {
  const kind = kindOf(query.report);
  const limit = options.pageSize ?? REPORT_PAGE_SIZE;
  const items: Record<string, unknown>[] = [];
  const commands: ExecutedCommandRow[] = [];
  let message = '';
  for (let offset = 0; ; offset += limit) {
    const page = await fetchReportPage(api, { ...query, offset, limit }, { signal: options.signal });
    if (offset === 0) message = page.message;
    for (const row of page.items) items.push(row);
    for (const row of page.commanditems) commands.push(row);
    options.onProgress?.({
      loaded: items.length + commands.length,
      total: page.total_items + page.total_commanditems,
    });
    if (!hasMorePages(offset + limit, page)) break;
  }
  return { kind, items, commands, message } as Report;
}

// ---- Files: the xlsx exports and the uploaded CSVs ----

export interface FileCallDeps {
  config: Pick<RuntimeConfig, 'apiBase'>;
  sessions: Pick<SessionStore, 'get' | 'clear'>;
  fetch?: typeof fetch;
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

/** The URL of an `/api/v2/…` call under the configured API base (which may name another origin). */
export function apiUrl(config: Pick<RuntimeConfig, 'apiBase'>, pathOrScript: string): string {
  const base = new URL(config.apiBase, globalThis.location?.href ?? 'http://localhost/');
  return new URL(pathOrScript, base).toString();
}

async function errorBody(response: Response): Promise<unknown> {
  const text = await response.text().catch(() => '');
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * GETs a file with the session token, reading the body as a stream and reporting the bytes received.
 * A refusal raises ApiError with the server's message; 'Authorization Failed' also ends the session.
 */
export async function fetchFile(
  deps: FileCallDeps,
  url: string,
  fallbackName: string,
  options: { signal?: AbortSignal | undefined; onProgress?: ((progress: FileProgress) => void) | undefined },
): Promise<DownloadedFile> {
  const doFetch = deps.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const headers: Record<string, string> = {};
  const token = deps.sessions.get()?.token;
  if (token) headers[API_KEY_HEADER] = token;
  let response: Response;
  try {
    response = await doFetch(url, { headers, credentials: 'same-origin', signal: options.signal });
  } catch (error) {
    if (options.signal?.aborted) throw error;
    throw new NetworkError(error);
  }
  if (!response.ok) {
    const body = await errorBody(response);
    if (isAuthorizationFailure(body)) deps.sessions.clear();
    throw new ApiError(response.status, body);
  }
  const fileName = fileNameFromDisposition(response.headers.get('content-disposition')) ?? fallbackName;
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
}

/** The query string of an export: the report's form and which part (its rows, or its executed commands). */
export function exportSearch(query: ReportQuery, part: ExportPart): string {
  const params = new URLSearchParams({
    report: query.report,
    startdate: query.startdate,
    enddate: query.enddate,
  });
  if (query.match) params.set('match', query.match);
  params.set('part', part);
  return params.toString();
}

/**
 * A report part as the server streams it (`GET /api/v2/reports/export`), saved under the server's name
 * (spec §9; the contract's `exportFileName` when the header is missing).
 */
export function exportReport(
  deps: FileCallDeps,
  query: ReportQuery,
  part: ExportPart,
  options: { signal?: AbortSignal; onProgress?: (progress: FileProgress) => void } = {},
): Promise<DownloadedFile> {
  return fetchFile(
    deps,
    apiUrl(deps.config, `v2/reports/export?${exportSearch(query, part)}`),
    exportFileName(query.report, part, query.startdate, query.enddate, query.match),
    options,
  );
}

/** The uploaded CSV a bulk-upload history row links to (`/api/v2/uploads/<feature>/<stored name>`). */
export function fetchUploadedFile(
  deps: FileCallDeps,
  path: string,
  options: { signal?: AbortSignal } = {},
): Promise<DownloadedFile> {
  const stored = path.split('/').pop() ?? 'upload.csv';
  return fetchFile(deps, apiUrl(deps.config, path), stored, options);
}
