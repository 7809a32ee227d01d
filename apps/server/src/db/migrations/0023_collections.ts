/**
 * 0023: collections on autopilot (docs/features.md § Collections on autopilot). The engine reads the loans
 * of 0022 and writes only these tables (and commands, through the one pipeline).
 * - `collection_policies`: the lender's one policy, a new row per version (1, 2, …), with who saved it.
 * - `collection_control`: one row: the kill switch (its history is in the audit log) and the payment
 *   watcher's durable cursor over `loan_payments.id`.
 * - `collection_holds`: devices (imei1) collections sends nothing to, with why and who.
 * - `collection_runs`: one daily run per lender's day, with its lease (one instance at a time), its keyset
 *   cursor over `loans.id` (a crash resumes after the last committed chunk) and its counts.
 * - `collection_actions`: every action taken (or skipped, or awaiting approval), with the rule and the
 *   command. UNIQUE (imei1, action_date, grp, trigger_payment_id): a reminder (PRE, DUE and POST share the
 *   group), a lock, an unlock or a release at most once per device and lender's day from the daily run
 *   (trigger 0), and once per payment from the payment watcher. The row and its command commit together.
 * - commands.interface gains 'C' (an automated collections command).
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE collection_policies (
    version integer PRIMARY KEY CHECK (version >= 1),
    policy jsonb NOT NULL,
    created_by text NOT NULL,
    created_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE collection_control (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    kill_switch boolean NOT NULL DEFAULT false,
    kill_reason text,
    kill_changed_by text,
    kill_changed_at timestamptz,
    payment_cursor bigint NOT NULL DEFAULT 0
  )`,
  `INSERT INTO collection_control DEFAULT VALUES`,
  `CREATE TABLE collection_holds (
    imei1 text PRIMARY KEY,
    reason text NOT NULL,
    held_by text NOT NULL,
    held_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
    held_at timestamptz NOT NULL DEFAULT now()
  )`,
  `CREATE TABLE collection_runs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_date date NOT NULL UNIQUE,
    version integer NOT NULL,
    state text NOT NULL DEFAULT 'RUNNING' CHECK (state IN ('RUNNING', 'DONE', 'STOPPED')),
    lease_owner text,
    lease_until timestamptz,
    cursor bigint NOT NULL DEFAULT 0,
    processed bigint NOT NULL DEFAULT 0,
    counts jsonb NOT NULL DEFAULT '{}'::jsonb,
    resumes integer NOT NULL DEFAULT 0,
    note text,
    started_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
  )`,
  `CREATE TABLE collection_actions (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id bigint REFERENCES collection_runs (id),
    loan_id bigint NOT NULL REFERENCES loans (id),
    imei1 text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('PRE', 'DUE', 'POST', 'LOCK', 'UNLOCK', 'RELEASE')),
    grp text NOT NULL GENERATED ALWAYS AS
      (CASE WHEN kind IN ('PRE', 'DUE', 'POST') THEN 'REMIND' ELSE kind END) STORED,
    action_date date NOT NULL,
    trigger_payment_id bigint NOT NULL DEFAULT 0,
    version integer NOT NULL,
    rule text NOT NULL,
    state text NOT NULL
      CHECK (state IN ('ISSUED', 'REFUSED', 'SKIPPED', 'AWAITING_APPROVAL', 'REJECTED')),
    skip_reason text,
    note text,
    due_date date,
    amount_minor bigint,
    command_id bigint,
    transaction_id text,
    created_at timestamptz NOT NULL DEFAULT now(),
    decided_by text,
    decided_by_user_id integer REFERENCES users (id) ON DELETE SET NULL,
    decided_at timestamptz,
    UNIQUE (imei1, action_date, grp, trigger_payment_id)
  )`,
  // A loan is released (or queued for approval, or rejected) once; a skipped release is tried again.
  `CREATE UNIQUE INDEX collection_actions_one_release ON collection_actions (loan_id)
    WHERE kind = 'RELEASE' AND state <> 'SKIPPED'`,
  `CREATE INDEX collection_actions_awaiting ON collection_actions (id) WHERE state = 'AWAITING_APPROVAL'`,
  `CREATE INDEX collection_actions_run ON collection_actions (run_id) WHERE run_id IS NOT NULL`,
  // The plan of a day reads the day's actions per loan.
  `CREATE INDEX collection_actions_day ON collection_actions (action_date, loan_id)`,
  // A run's chunk reads the open instalments of its loans due by the day of a Pre reminder (the plan), and
  // those overdue past the grace period (locked FOR SHARE against a payment's allocation).
  `CREATE INDEX loan_instalments_open_by_loan ON loan_instalments (loan_id, due_date)
    INCLUDE (amount_minor, paid_minor) WHERE paid_minor < amount_minor`,
  // The kill switch cancels the automated commands still QUEUED.
  `CREATE INDEX commands_collections_queued ON commands (id) WHERE interface = 'C' AND status = 'QUEUED'`,
  // 'C': an automated collections command. NOT VALID then VALIDATE: the check of the existing rows does
  // not block writes to commands meanwhile.
  `ALTER TABLE commands DROP CONSTRAINT IF EXISTS commands_interface_check`,
  `ALTER TABLE commands ADD CONSTRAINT commands_interface_check
    CHECK (interface IN ('S', 'A', 'B', 'C')) NOT VALID`,
  `ALTER TABLE commands VALIDATE CONSTRAINT commands_interface_check`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
