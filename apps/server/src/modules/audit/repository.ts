import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import type { Principal } from '../../plugins/auth';

export interface AuditEntry {
  actor: Principal | { label: string } | null;
  action: string;
  target?: string | null;
  address?: string | null;
  result: string;
  details?: Record<string, unknown>;
}

/** Appends one row to the append-only audit log (a trigger refuses UPDATE, DELETE and TRUNCATE). */
export async function appendAudit(db: Kysely<DB>, entry: AuditEntry): Promise<void> {
  const actor = entry.actor;
  const principal = actor && 'userId' in actor ? actor : null;
  await db
    .insertInto('audit_log')
    .values({
      actor_user_id: principal?.userId ?? null,
      actor_key_id: principal?.keyId ?? null,
      actor: principal ? principal.email : actor && 'label' in actor ? actor.label : 'system',
      action: entry.action,
      target: entry.target ?? null,
      address: entry.address ?? null,
      result: entry.result,
      details: entry.details ? JSON.stringify(entry.details) : null,
    })
    .execute();
}
