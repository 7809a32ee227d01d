/**
 * 0030: payments as a ledger (docs/features.md § Loans and payments). A payment is never deleted:
 * a chargeback or a bounced transfer reverses it (`POST /api/v2/payments/reverse`), which keeps the row
 * and says when, by whom and why. A reversed payment no longer counts anywhere: the loan's instalments are
 * allocated again from the payments that stand, and the collections plan's recent payment leaves it out.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE loan_payments ADD COLUMN reversed_at timestamptz`,
  `ALTER TABLE loan_payments ADD COLUMN reversed_by text`,
  `ALTER TABLE loan_payments ADD COLUMN reversal_reason text`,
  `ALTER TABLE loan_payments ADD CONSTRAINT loan_payments_reversal CHECK (
    (reversed_at IS NULL) = (reversal_reason IS NULL))`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
