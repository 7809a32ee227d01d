import { type Kysely, sql } from 'kysely';

/**
 * `audit_anchors`: the audit chain's head as it stood, published by the sealer with a keyed MAC
 * (AUDIT_ANCHOR_KEY, a key the database does not hold; modules/audit/anchor.ts). A rewrite of the chain
 * changes an anchored link's hash, a deleted tail leaves an anchored link missing, and an anchor forged
 * without the key fails its MAC. Append-only like the chain (the same trigger function and grants).
 */
const STATEMENTS = [
  `CREATE TABLE audit_anchors (
    seq bigint PRIMARY KEY CHECK (seq > 0),
    hash text NOT NULL,
    mac text NOT NULL,
    at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TRIGGER audit_anchors_no_update BEFORE UPDATE OR DELETE ON audit_anchors
    FOR EACH ROW EXECUTE FUNCTION audit_chain_append_only()`,
  `CREATE TRIGGER audit_anchors_no_truncate BEFORE TRUNCATE ON audit_anchors
    FOR EACH STATEMENT EXECUTE FUNCTION audit_chain_append_only()`,
  `ALTER TABLE audit_anchors ENABLE ALWAYS TRIGGER audit_anchors_no_update`,
  `ALTER TABLE audit_anchors ENABLE ALWAYS TRIGGER audit_anchors_no_truncate`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
