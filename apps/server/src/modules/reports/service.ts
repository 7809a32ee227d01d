/**
 * The reports: a report request as the reports read it: its tab, the operator's days, the match filter, and what the
 * principal may see of it (the authority module: the devices' tenant, the bulk-upload history's rows and
 * file links).
 */
import {
  type AuditResponse,
  auditBrand,
  auditFileName,
  daysInZone,
  type ExportPart,
  isAuditEmpty,
  MESSAGES,
  type RegistrationFilter,
  type ReportTab,
  reportTab,
  validateReportForm,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { scopeFor } from '../../authz';
import { badRequest, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import type { RowSource } from '../../lib/xlsx-export';
import { appendAudit } from '../audit/repository';
import { type OpenedUpload, openUpload } from '../uploads/service';
import { auditReportXlsx } from './export';
import type { DateRange } from './repository';
import { sourceFor } from './sources';

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

/** The reports' rows, the uploaded files they link to, and the Audit Report By IMEI's file. */
export class ReportService {
  private readonly db: Kysely<DB>;

  constructor(deps: { db: Kysely<DB> }) {
    this.db = deps.db;
  }

  /** The rows of one part of a tab; null for a part the tab does not have. */
  sourceFor(tab: ReportTab, part: ExportPart, range: DateRange, match: RegistrationFilter): RowSource | null {
    return sourceFor(this.db, tab, part, range, match);
  }

  /** The stored file a bulk-upload history row links to, for `actor` (modules/uploads). */
  openUpload(
    actor: Principal,
    where: { dataDir: string; retentionMs: number; feature: string; file: string },
  ): Promise<OpenedUpload> {
    return openUpload(this.db, actor, where);
  }

  /**
   * The Audit Report By IMEI as an xlsx file, `AuditReport_{brand}_imei-{imei}.xlsx`; the
   * download is audited. 404 when the report is empty (or out of the caller's scope). `audit`: the report
   * as the devices service reads it for `actor`.
   */
  async exportAuditReport(
    actor: Principal,
    audit: Omit<AuditResponse, 'status'>,
    request: { imei1: string; timeZone: string; address: string },
  ): Promise<{ file: Buffer; name: string }> {
    const { imei1 } = request;
    if (isAuditEmpty(audit)) throw notFound(MESSAGES.auditEmpty);
    const file = await auditReportXlsx(audit, request.timeZone);
    const name = auditFileName(auditBrand(audit), imei1);
    await appendAudit(this.db, {
      actor,
      action: 'auditReport.export',
      target: imei1,
      address: request.address,
      result: 'success',
      details: {
        registration: audit.registration.length,
        release: audit.release.length,
        deenroll: audit.deenroll.length,
        commands: audit.commands.length,
      },
    });
    return { file, name };
  }
}
