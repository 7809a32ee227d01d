/**
 * The audit log as a principal may read it (authz/resources/audit.ts): the lender all of it, a retailer's
 * user the rows about its retailer's devices and its own actions.
 */
import type { AuditSearch } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { scopeFor } from '../../authz';
import { badRequest } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { dateTimeCells, type RowSource } from '../../lib/xlsx-export';
import { AUDIT_COUNT_CAP, type AuditRowValues, auditSource } from './repository';

/** The audit log as a principal may read it: a page of a search, and the export's rows. */
export class AuditService {
  private readonly db: Kysely<DB>;

  constructor(deps: { db: Kysely<DB> }) {
    this.db = deps.db;
  }

  /**
   * The rows of `search` that `actor` may read, with the export's columns and cells (date-times as date
   * cells); `timeZone`: the operator's, for the whole days asked for.
   */
  auditLog(actor: Principal, search: AuditSearch, timeZone: string): RowSource {
    const { db } = this;
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
  async searchAudit(
    actor: Principal,
    search: AuditSearch,
    timeZone: string,
  ): Promise<{ rows: AuditRowValues[]; total: number; capped: boolean }> {
    const { db } = this;
    const source = auditSource(db, checkedSearch(search), timeZone, scopeFor(actor, 'audit'));
    // The count stops at AUDIT_COUNT_CAP: a search never counts the whole log.
    const [rows, counted] = await Promise.all([
      source.page(search.offset, search.limit),
      source.countUpTo(AUDIT_COUNT_CAP),
    ]);
    return { rows, ...counted };
  }
}

function checkedSearch<T extends AuditSearch>(search: T): T {
  if (search.from && search.to && search.from > search.to)
    throw badRequest('End date cannot be prior to start date.');
  return search;
}
