import { type Kysely, sql } from 'kysely';

/**
 * An audit log its own writer cannot silence (docs/adr/0009-audit-hash-chain.md, docs/reliability.md).
 *
 * 1. The append-only triggers fire ALWAYS: `SET session_replication_role = replica` no longer skips them.
 *    (Disabling a trigger needs the table's owner; the application runs as a role that owns nothing,
 *    docs/operations.md § Database roles.)
 * 2. `audit_chain`: the hash chain, written by a background sealer in the order rows are sealed. Each
 *    row names one audit row and carries sha256(previous hash | that row's content); `seq` counts 1, 2,
 *    3… without gaps. It is append-only too. `npm run cli -- audit verify` recomputes it.
 * 3. The Audit Log screen's filters have indexes that also give the newest-first order (IMEI/target,
 *    user/actor, the retailer scope's user id, action prefix), so a search reads a page, and its count
 *    (capped at 10,000) an index range, not the table.
 */
const STATEMENTS = [
  `ALTER TABLE audit_log ENABLE ALWAYS TRIGGER audit_log_no_update`,
  `ALTER TABLE audit_log ENABLE ALWAYS TRIGGER audit_log_no_truncate`,
  `CREATE TABLE audit_chain (
    seq bigint PRIMARY KEY CHECK (seq > 0),
    audit_id bigint NOT NULL UNIQUE,
    hash text NOT NULL,
    sealed_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE FUNCTION audit_chain_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'audit_chain is append-only';
  END;
  $$`,
  `CREATE TRIGGER audit_chain_no_update BEFORE UPDATE OR DELETE ON audit_chain
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append_only()`,
  `CREATE TRIGGER audit_chain_no_truncate BEFORE TRUNCATE ON audit_chain
    FOR EACH STATEMENT EXECUTE FUNCTION audit_chain_append_only()`,
  `ALTER TABLE audit_chain ENABLE ALWAYS TRIGGER audit_chain_no_update`,
  `ALTER TABLE audit_chain ENABLE ALWAYS TRIGGER audit_chain_no_truncate`,
  `CREATE INDEX audit_log_target ON audit_log (target, id) WHERE target IS NOT NULL`,
  // INCLUDE (actor): the capped count is then an index-only scan (PostgreSQL needs an expression's
  // column in the index for that).
  `CREATE INDEX audit_log_actor ON audit_log (lower(actor), id) INCLUDE (actor)`,
  `CREATE INDEX audit_log_actor_user ON audit_log (actor_user_id, id) WHERE actor_user_id IS NOT NULL`,
  `CREATE INDEX audit_log_action ON audit_log (action text_pattern_ops, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
