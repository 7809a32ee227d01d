/**
 * 0033: references belong to their tenant (docs/features.md § Loans and payments, docs/tenancy.md).
 * A `loan_ref` and a `payment_ref` are the tenant's own ids: a retailer's claimed reference no longer blocks
 * the lender's (or another retailer's), nor tells anyone that it exists.
 * - `loans.retailer_phone`: the tenant of the loan's references, its device's retailer when the loan was
 *   created (NULL: the lender's own device). Filled here from the devices for the loans there are.
 * - `loan_payments.retailer_phone`: the tenant of the payment's reference, its loan's.
 * - `loan_ref` is unique per tenant, and `payment_ref` per tenant: the lender's own (NULL) count as one
 *   tenant. The ref comes first in each index: a lender-wide look-up by ref alone reads it too.
 * Who may see a loan is still decided by its device's retailer (authz/resources/loans.ts).
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE loans ADD COLUMN retailer_phone text`,
  `UPDATE loans l SET retailer_phone = d.retailer_phone
     FROM devices d WHERE d.imei1 = l.imei AND d.retailer_phone IS NOT NULL`,
  `ALTER TABLE loans DROP CONSTRAINT loans_loan_ref_key`,
  `CREATE UNIQUE INDEX loans_ref_per_tenant ON loans (loan_ref, (coalesce(retailer_phone, '')))`,
  `ALTER TABLE loan_payments ADD COLUMN retailer_phone text`,
  `UPDATE loan_payments p SET retailer_phone = l.retailer_phone
     FROM loans l WHERE l.id = p.loan_id AND l.retailer_phone IS NOT NULL`,
  `ALTER TABLE loan_payments DROP CONSTRAINT loan_payments_payment_ref_key`,
  `CREATE UNIQUE INDEX loan_payments_ref_per_tenant ON loan_payments (payment_ref, (coalesce(retailer_phone, '')))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
