/**
 * The SUPERADMIN's audit log: `POST /api/v2/audit/search` (one page of rows, newest first, and
 * the total) and `GET /api/v2/audit/export` (the same search as a streamed xlsx, read with the session
 * token through `ApiClient.file`, which reports the bytes received).
 */
import { type AuditSearchResult, auditSearchResponseSchema } from '@lendlock/contract';
import type { ApiCallOptions, ApiClient, DownloadedFile } from './client';
import type { FileOptions } from './reports';
import { withTimeZone } from './timeZone';

/** Rows asked per search call (the server allows up to 10,000). */
export const AUDIT_PAGE_SIZE = 500;

export type { AuditRow, AuditSearchResult } from '@lendlock/contract';

/**
 * What the log is searched by; an absent field does not filter. Dates are YYYY-MM-DD, whole days in the
 * browser's time zone (sent with every search and export, timeZone.ts).
 */
export interface AuditFilter {
  /** The IMEI a row is about (its target). */
  imei?: string;
  /** The acting user's email. */
  user?: string;
  /** The start of the action, e.g. `key.` or `command.LOCK`. */
  action?: string;
  from?: string;
  to?: string;
}

export interface AuditPageRequest extends AuditFilter {
  offset: number;
  limit: number;
}

const FILTER_FIELDS = ['imei', 'user', 'action', 'from', 'to'] as const;

/** The filter's fields that are set, in a fixed order (what is sent, and what the query key holds). */
export function filterFields(filter: AuditFilter): AuditFilter {
  const fields: AuditFilter = {};
  for (const field of FILTER_FIELDS) {
    const value = filter[field];
    if (value) fields[field] = value;
  }
  return fields;
}

export const auditKeys = {
  all: ['audit'] as const,
  search: (request: AuditPageRequest) =>
    [
      ...auditKeys.all,
      'search',
      {
        imei: request.imei ?? null,
        user: request.user ?? null,
        action: request.action ?? null,
        from: request.from ?? null,
        to: request.to ?? null,
        offset: request.offset,
        limit: request.limit,
      },
    ] as const,
};

/** One page of the log: the rows after `offset`, at most `limit`, newest first, and how many match. */
export function searchAudit(
  api: ApiClient,
  request: AuditPageRequest,
  options: Pick<ApiCallOptions<unknown>, 'signal'> = {},
): Promise<AuditSearchResult> {
  return api.call('v2/audit/search', {
    ...options,
    method: 'POST',
    body: withTimeZone({ ...filterFields(request), offset: request.offset, limit: request.limit }),
    parse: (body) => auditSearchResponseSchema.parse(body),
  });
}

/** The query string of an export: the filter's fields that are set, and the browser's time zone. */
export function auditExportSearch(filter: AuditFilter): string {
  return new URLSearchParams(Object.entries(withTimeZone(filterFields(filter)))).toString();
}

/** The name the server gives the export, used only when its content-disposition is missing. */
export function auditFileName(filter: Pick<AuditFilter, 'from' | 'to'>): string {
  return `audit-${filter.from || 'all'}-${filter.to || 'all'}.xlsx`;
}

/** The whole search as the server streams it, saved under the server's file name. */
export function exportAudit(
  api: ApiClient,
  filter: AuditFilter,
  options: FileOptions = {},
): Promise<DownloadedFile> {
  const search = auditExportSearch(filter);
  const path = search ? `v2/audit/export?${search}` : 'v2/audit/export';
  return api.file(path, { ...options, fallbackName: auditFileName(filter) });
}
