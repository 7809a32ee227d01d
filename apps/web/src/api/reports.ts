/**
 * Reports and history (downloadReports.php) and the `/api/v2/` calls beside it: the xlsx exports the
 * server streams, and the uploaded files the bulk-upload history links to. The JSON call is paged
 * (offset/limit) and read to the end; the two file calls go through `ApiClient.file` (streamed, with the
 * session token as X-API-Key, which a plain link cannot send). The report and its exports carry the
 * browser's time zone (timeZone.ts): the days asked for are the operator's.
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
  registrationRowSchema,
  reportTab,
} from '@lendlock/contract';
import { z } from 'zod';
import {
  type ApiCallOptions,
  type ApiClient,
  ApiError,
  type DownloadedFile,
  type FileCallOptions,
} from './client';
import { withTimeZone } from './timeZone';

/** What a file call takes besides its address: the abort signal and the progress callback. */
export type FileOptions = Omit<FileCallOptions, 'fallbackName'>;

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
    body: withTimeZone(request),
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

// ---- Files: the xlsx exports and the uploaded CSVs (through ApiClient.file) ----

/**
 * The query string of an export: the report's form, which part (its rows, or its executed commands) and
 * the browser's time zone (its days, and the date cells' wall clock).
 */
export function exportSearch(query: ReportQuery, part: ExportPart): string {
  const params = new URLSearchParams({
    report: query.report,
    startdate: query.startdate,
    enddate: query.enddate,
  });
  if (query.match) params.set('match', query.match);
  params.set('part', part);
  const { timeZone } = withTimeZone({});
  if (timeZone) params.set('timeZone', timeZone);
  return params.toString();
}

/**
 * A report part as the server streams it (`GET /api/v2/reports/export`), saved under the server's name
 * (the contract's `exportFileName` when the header is missing).
 */
export function exportReport(
  api: ApiClient,
  query: ReportQuery,
  part: ExportPart,
  options: FileOptions = {},
): Promise<DownloadedFile> {
  return api.file(`v2/reports/export?${exportSearch(query, part)}`, {
    ...options,
    fallbackName: exportFileName(query.report, part, query.startdate, query.enddate, query.match),
  });
}

/** The uploaded CSV a bulk-upload history row links to (`/api/v2/uploads/<feature>/<stored name>`). */
export function fetchUploadedFile(
  api: ApiClient,
  path: string,
  options: FileOptions = {},
): Promise<DownloadedFile> {
  return api.file(path, { ...options, fallbackName: path.split('/').pop() || 'upload.csv' });
}
