/**
 * The audit log as a principal may read it (authz/resources/audit.ts): the lender all of it, a retailer's
 * user the rows about its retailer's devices and its own actions; and the Audit Report By IMEI's download.
 */
import { type AuditSearch, auditBrand, auditFileName, isAuditEmpty, MESSAGES } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { scopeFor } from '../../authz';
import { badRequest, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { dateTimeCells, type RowSource } from '../../lib/xlsx-export';
import { auditReport } from '../devices/service';
import { auditReportXlsx } from '../reports/export';
import { AUDIT_COUNT_CAP, type AuditRowValues, appendAudit, auditSource } from './repository';

/**
 * The rows of `search` that `actor` may read, with the export's columns and cells (date-times as date
 * cells); `timeZone`: the operator's, for the whole days asked for.
 */
export function auditLog(db: Kysely<DB>, actor: Principal, search: AuditSearch, timeZone: string): RowSource {
  const rows = auditSource(db, checkedSearch(search), timeZone, scopeFor(actor, 'audit'));
  const at = dateTimeCells(timeZone);
  return {
    count: () => rows.count(),
    page: (offset, limit) => rows.page(offset, limit),
    after: (after, limit) => rows.after(after, limit),
    columns: ['Id', 'When', 'Who', 'What', 'Target', 'Address', 'Result', 'Details'],
    cells: (row) => [
      row.id,
      at(row.at),
      row.actor,
      row.action,
      row.target,
      row.address,
      row.result,
      row.details,
    ],
  };
}

/** A page of a search, and how many rows match (counting no further than AUDIT_COUNT_CAP). */
export async function searchAudit(
  db: Kysely<DB>,
  actor: Principal,
  search: AuditSearch,
  timeZone: string,
): Promise<{ rows: AuditRowValues[]; total: number; capped: boolean }> {
  const source = auditSource(db, checkedSearch(search), timeZone, scopeFor(actor, 'audit'));
  // The count stops at AUDIT_COUNT_CAP: a search never counts the whole log.
  const [rows, counted] = await Promise.all([
    source.page(search.offset, search.limit),
    source.countUpTo(AUDIT_COUNT_CAP),
  ]);
  return { rows, ...counted };
}

function checkedSearch<T extends AuditSearch>(search: T): T {
  if (search.from && search.to && search.from > search.to)
    throw badRequest('End date cannot be prior to start date.');
  return search;
}

/**
 * The Audit Report By IMEI (spec §2) as an xlsx file, `AuditReport_{brand}_imei-{imei}.xlsx`; the
 * download is audited. 404 when the report is empty (or out of the caller's scope).
 */
export async function exportAuditReport(
  db: Kysely<DB>,
  actor: Principal,
  request: { imei1: string; timeZone: string; address: string },
): Promise<{ file: Buffer; name: string }> {
  const { imei1 } = request;
  const audit = await auditReport(db, actor, imei1);
  if (isAuditEmpty(audit)) throw notFound(MESSAGES.auditEmpty);
  const file = await auditReportXlsx(audit, request.timeZone);
  const name = auditFileName(auditBrand(audit), imei1);
  await appendAudit(db, {
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
