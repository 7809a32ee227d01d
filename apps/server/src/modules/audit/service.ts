/**
 * The audit log as a principal may read it (authz/resources/audit.ts): the lender all of it, a retailer's
 * user the rows about its retailer's devices and its own actions.
 */
import type { AuditSearch } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { scopeFor } from '../../authz';
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import { badRequest } from '../../plugins/errors';
import { type AuditRowSource, auditSource } from './repository';

/** The rows of `search` that `actor` may read; `timeZone`: the operator's, for the whole days asked for. */
export function auditLog(
  db: Kysely<DB>,
  actor: Principal,
  search: AuditSearch,
  timeZone: string,
): AuditRowSource {
  if (search.from && search.to && search.from > search.to)
    throw badRequest('End date cannot be prior to start date.');
  return auditSource(db, search, timeZone, scopeFor(actor, 'audit'));
}
