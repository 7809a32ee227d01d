/**
 * The Download reports form (spec §5 Report) as pure functions: its values, `validate()` with the
 * contract's rules and messages, the query it sends, which parts Download exports, and the message a
 * failure shows (spec §8 Report).
 */
import {
  type ExportPart,
  MESSAGES,
  REPORT_TABS,
  type RegistrationFilter,
  type ReportTab,
  reportTab,
  validateReportForm,
} from '@lendlock/contract';
import { ApiError } from '../../api/client';
import type { FileProgress, ReportQuery } from '../../api/reports';
import { REPORT_LABELS as L } from './labels';

export interface ReportFormValues {
  /** YYYY-MM-DD, as a date input gives it; '' when not chosen. */
  startdate: string;
  enddate: string;
  /** The registration filter; '' until one is chosen. */
  match: RegistrationFilter | '';
}

export const EMPTY_REPORT_FORM: ReportFormValues = { startdate: '', enddate: '', match: '' };

export const FIRST_TAB: ReportTab = REPORT_TABS[0];

export function tabOf(report: string): ReportTab {
  return reportTab(report) ?? FIRST_TAB;
}

/** Null when the form may be sent for `tab`; otherwise the message to show. */
export function validate(tab: ReportTab, form: ReportFormValues): string | null {
  return validateReportForm({
    report: tab.report,
    startdate: form.startdate,
    enddate: form.enddate,
    match: tab.kind === 'registration' && form.match !== '' ? form.match : undefined,
  });
}

/** What the form asks the server for on `tab` (the filter only on the registration tab). */
export function reportQuery(tab: ReportTab, form: ReportFormValues): ReportQuery {
  const query: ReportQuery = { report: tab.report, startdate: form.startdate, enddate: form.enddate };
  if (tab.kind === 'registration' && form.match !== '') query.match = form.match;
  return query;
}

export function sameQuery(a: ReportQuery | null, b: ReportQuery | null): boolean {
  if (a === null || b === null) return a === b;
  return (
    a.report === b.report &&
    a.startdate === b.startdate &&
    a.enddate === b.enddate &&
    (a.match ?? null) === (b.match ?? null)
  );
}

/** Download exports the tab's rows, and on a command tab its executed commands too. */
export function exportParts(tab: ReportTab): ExportPart[] {
  return tab.kind === 'command' ? ['items', 'commands'] : ['items'];
}

/** Spec §8: the server's own message when it refused, else 'Something went wrong.Please try again in sometime'. */
/**
 * The reason an uploaded file a history row links to is gone (410: deleted after UPLOAD_RETENTION, e.g.
 * 'This file was removed after 90 days (UPLOAD_RETENTION).'), shown in place of the link; null otherwise.
 */
export function removedUploadMessage(error: unknown): string | null {
  return error instanceof ApiError && error.status === 410 && error.serverMessage
    ? error.serverMessage
    : null;
}

export function failureMessage(error: unknown): string {
  if (error instanceof ApiError && error.status < 500 && error.serverMessage) return error.serverMessage;
  return MESSAGES.reportFailure;
}

/** 1536 → '1.5 KB'. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** 'Exporting report-….xlsx: 1.5 MB received, 1,200 rows'. */
export function exportProgressText(progress: FileProgress): string {
  const parts = [L.received(formatBytes(progress.bytes))];
  if (progress.totalRows !== null) parts.push(L.ofRows(progress.totalRows));
  return `${L.exporting(progress.fileName)}: ${parts.join(', ')}`;
}
