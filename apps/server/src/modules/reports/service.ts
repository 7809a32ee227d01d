/**
 * A report request as the reports read it: its tab, the operator's days, the match filter, and what the
 * principal may see of it (the authority module: the devices' tenant, the bulk-upload history's rows and
 * file links).
 */
import { daysInZone, reportTab, validateReportForm } from '@lendlock/contract';
import { scopeFor } from '../../authz';
import { badRequest } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DateRange } from './sources';

export interface ReportQuery {
  report: string;
  startdate: string;
  enddate: string;
  match?: string | undefined;
}

/** Checks `query` and scopes it to `principal`; `timeZone`: the operator's (else REPORT_TIMEZONE). */
export function reportRequest(principal: Principal, query: ReportQuery, timeZone: string) {
  const tab = reportTab(query.report);
  if (!tab) throw badRequest(`Unknown report: ${query.report}`);
  const problem = validateReportForm(query);
  if (problem) throw badRequest(problem);
  const range: DateRange = {
    timeZone,
    ...daysInZone(query.startdate, query.enddate, timeZone),
    scope: { devices: scopeFor(principal, 'devices'), uploads: scopeFor(principal, 'uploads') },
  };
  return { tab, range, match: (query.match ?? 'ALL') as 'ALL' | 'YES' | 'NO' };
}
