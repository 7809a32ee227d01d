/**
 * 0035: row-level security on a device's history too (docs/adr/0011-row-level-security.md), with the
 * policy of 0032: a registration is its retailer's (`registrations.retailer_phone`, the tenant it was
 * registered for); a release, a de-enrollment and a re-registration request follow their device. The
 * '*' test comes first, so the lender's and the system's statements never run the subquery.
 */
import { type Kysely, sql } from 'kysely';

// In a scalar subquery, PostgreSQL reads the setting once per statement (an InitPlan), not once per row.
const TENANT = `(SELECT current_setting('lendlock.tenant', true))`;

const OWNERSHIP: readonly (readonly [table: string, owned: string])[] = [
  ['registrations', `registrations.retailer_phone = ${TENANT}`],
  ...['releases', 'deenrollments', 'reregistration_requests'].map(
    (table) => [table, `EXISTS (SELECT 1 FROM devices p WHERE p.imei1 = ${table}.imei1)`] as const,
  ),
];

/** The tables this migration puts under row-level security. */
export const TENANT_TABLES: readonly string[] = OWNERSHIP.map(([table]) => table);

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const [table, owned] of OWNERSHIP) {
    const condition = `${TENANT} = '*' OR ${owned}`;
    await sql.raw(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`).execute(db);
    await sql.raw(`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`).execute(db);
    await sql
      .raw(`CREATE POLICY tenant_isolation ON ${table} USING (${condition}) WITH CHECK (${condition})`)
      .execute(db);
  }
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
