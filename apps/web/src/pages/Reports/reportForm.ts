/**
 * The Download reports form as pure functions: its values, `validate()` with the
 * contract's rules and messages, the query it sends, which parts Download exports, and the message a
 * failure shows.
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
import { ApiError, refusalMessage } from '../../api/client';
import type { ReportQuery } from '../../api/reports';

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

/**
 * The reason an uploaded file a history row links to is gone (410: deleted after UPLOAD_RETENTION, e.g.
 * 'This file was removed after 90 days (UPLOAD_RETENTION).'), shown in place of the link; null otherwise.
 */
export function removedUploadMessage(error: unknown): string | null {
  return error instanceof ApiError && error.status === 410 && error.serverMessage
    ? error.serverMessage
    : null;
}

/** The server's own message when it refused, else 'Something went wrong.Please try again in sometime'. */
export function failureMessage(error: unknown): string {
  return refusalMessage(error, MESSAGES.reportFailure);
}
