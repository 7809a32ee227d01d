/**
 * 0022: loans and payments (docs/features.md § Loans and payments). The data model agreed for the
 * collections loop: the collections engine (modules/collections) reads these tables and never writes them.
 * - `loans`: one per lender's loan (`loan_ref`, the lender's own id), on one device's IMEI (the devices
 *   table's `imei1`: retailer scoping follows the device). At most one OPEN loan per IMEI. Amounts are
 *   integers in the minor unit of the loan's ISO 4217 `currency` (paise, cents).
 * - `loan_instalments`: the schedule, numbered from 1, with what is paid of each. The daily run scans the
 *   open ones by due date (`loan_instalments_open_due`).
 * - `loan_payments`: every payment received, once per `payment_ref` (the lender's payment id: a retry of
 *   the same payment answers the first one). `received_at` is when it reached us; the engine follows the
 *   table by `id` (a durable cursor) and `received_at`.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE loans (
    id bigserial PRIMARY KEY,
    loan_ref text NOT NULL UNIQUE,
    imei text NOT NULL,
    customer_name text NOT NULL,
    currency char(3) NOT NULL,
    status text NOT NULL DEFAULT 'OPEN' CHECK (status IN ('OPEN', 'PAID')),
    promise_to_pay_until date,
    created_at timestamptz NOT NULL DEFAULT now(),
    created_by text
  )`,
  // One OPEN loan per device; a paid one stays beside the next.
  `CREATE UNIQUE INDEX loans_one_open_per_imei ON loans (imei) WHERE status = 'OPEN'`,
  // Device Details reads a device's latest loan, paid or not.
  `CREATE INDEX loans_imei ON loans (imei, id DESC)`,
  `CREATE TABLE loan_instalments (
    loan_id bigint NOT NULL REFERENCES loans (id) ON DELETE CASCADE,
    seq integer NOT NULL CHECK (seq >= 1),
    due_date date NOT NULL,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    paid_minor bigint NOT NULL DEFAULT 0 CHECK (paid_minor >= 0 AND paid_minor <= amount_minor),
    paid_at timestamptz,
    PRIMARY KEY (loan_id, seq)
  )`,
  `CREATE INDEX loan_instalments_open_due ON loan_instalments (due_date) WHERE paid_minor < amount_minor`,
  `CREATE TABLE loan_payments (
    id bigserial PRIMARY KEY,
    loan_id bigint NOT NULL REFERENCES loans (id),
    payment_ref text NOT NULL UNIQUE,
    amount_minor bigint NOT NULL CHECK (amount_minor > 0),
    paid_at timestamptz NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    source text CHECK (source IN ('API', 'CSV', 'CONSOLE')),
    recorded_by text
  )`,
  `CREATE INDEX loan_payments_received ON loan_payments (received_at)`,
  `CREATE INDEX loan_payments_loan ON loan_payments (loan_id, id)`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
