/**
 * 0038: the migrations' bookkeeping (`schema_migrations`, `schema_migrations_lock`) is written by the
 * owner that runs the migrations only. The application's role was granted writes on every table, these
 * two too, so it could mark a migration applied that never ran, or delete a row to have one run again.
 * Every role but the owner loses INSERT, UPDATE, DELETE and TRUNCATE on them (SELECT stays); db/roles.ts
 * no longer grants them at start.
 */
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`DO $$
    DECLARE grantee text;
    BEGIN
      FOR grantee IN
        SELECT DISTINCT a.grantee::regrole::text
        FROM pg_class c, aclexplode(c.relacl) a
        WHERE c.oid IN (to_regclass('schema_migrations'), to_regclass('schema_migrations_lock'))
          AND a.grantee <> 0 AND a.grantee <> c.relowner
          AND a.privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')
      LOOP
        EXECUTE format(
          'REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON schema_migrations, schema_migrations_lock FROM %s',
          grantee);
      END LOOP;
    END $$`.execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
