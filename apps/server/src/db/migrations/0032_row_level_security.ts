/**
 * 0032: the database enforces the tenant boundary (docs/adr/0011-row-level-security.md).
 *
 * Every table that holds a tenant's data gets row-level security, ENABLEd and FORCEd (so the tables'
 * owner is subject too), and one policy, `tenant_isolation`, for every command, with the same USING and
 * WITH CHECK: a row is visible, changeable and writable when the connection's `lendlock.tenant` setting
 * is '*' (the lender and the system) or names the row's tenant. A row's tenant is its retailer phone
 * (users, devices, webhook endpoints) or its parent's: a child row is in when its parent row is visible,
 * which the parent's own policy decides inside the EXISTS. A connection that never set `lendlock.tenant`
 * reads NULL and sees nothing (fail closed). Rows with no tenant (a user, device or endpoint without a
 * retailer phone, a batch of the system) are the lender's.
 *
 * The '*' test comes first: for the lender and the system the OR is decided before any subquery runs,
 * and the plans of the hot paths stay those they were (docs/adr/0011 § Cost).
 */
import { type Kysely, sql } from 'kysely';

// In a scalar subquery, PostgreSQL reads the setting once per statement (an InitPlan), not once per row.
const TENANT = `(SELECT current_setting('lendlock.tenant', true))`;

/** Table → the condition, on that table's row, that it belongs to the tenant in TENANT. */
const OWNERSHIP: readonly (readonly [table: string, owned: string])[] = [
  ['users', `users.retailer_phone = ${TENANT}`],
  ['devices', `devices.retailer_phone = ${TENANT}`],
  ['webhook_endpoints', `webhook_endpoints.retailer_phone = ${TENANT}`],
  // A user's credentials and settings follow the user.
  ...[
    'api_keys',
    'sessions',
    'user_permissions',
    'user_mfa',
    'mfa_recovery_codes',
    'mfa_challenges',
    'password_resets',
    'login_known_networks',
  ].map((table) => [table, `EXISTS (SELECT 1 FROM users p WHERE p.id = ${table}.user_id)`] as const),
  // What was done or is held on a device follows the device.
  ...['commands', 'collection_holds', 'collection_actions'].map(
    (table) => [table, `EXISTS (SELECT 1 FROM devices p WHERE p.imei1 = ${table}.imei1)`] as const,
  ),
  // A batch (its upload included) is its user's; a batch of the system (no user) is the lender's.
  ['batches', 'EXISTS (SELECT 1 FROM users p WHERE p.id = batches.user_id)'],
  ...['batch_items', 'batch_chunks'].map(
    (table) => [table, `EXISTS (SELECT 1 FROM batches p WHERE p.id = ${table}.batch_id)`] as const,
  ),
  // A loan follows the device of its IMEI (either IMEI of the device); a loan on no device is the lender's.
  [
    'loans',
    'EXISTS (SELECT 1 FROM device_imeis i JOIN devices p ON p.imei1 = i.device WHERE i.imei = loans.imei)',
  ],
  ...['loan_instalments', 'loan_payments'].map(
    (table) => [table, `EXISTS (SELECT 1 FROM loans p WHERE p.id = ${table}.loan_id)`] as const,
  ),
  [
    'webhook_deliveries',
    'EXISTS (SELECT 1 FROM webhook_endpoints p WHERE p.id = webhook_deliveries.endpoint_id)',
  ],
];

/** The tables under row-level security (the test checks each of them). */
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
