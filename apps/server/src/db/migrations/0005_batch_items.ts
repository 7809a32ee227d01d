import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE batches ADD COLUMN paused boolean NOT NULL DEFAULT false`,
  `ALTER TABLE batches ADD COLUMN lease_owner text`,
  `ALTER TABLE batches ADD COLUMN lease_until timestamptz`,
  `ALTER TABLE batches ADD COLUMN started_at timestamptz`,
  `ALTER TABLE batches ADD COLUMN last_seq integer NOT NULL DEFAULT 0`,
  `CREATE TABLE batch_items (
    batch_id bigint NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    seq integer NOT NULL,
    imei text NOT NULL,
    name text,
    amount text,
    date text,
    template text,
    header text,
    message text,
    result text CHECK (result IN ('found', 'not found')),
    note text,
    transaction_id text,
    processed_at timestamptz,
    PRIMARY KEY (batch_id, seq)
  )`,
  `CREATE INDEX batch_items_todo ON batch_items (batch_id, seq) WHERE result IS NULL`,
];

/** The rows of a batch, each processed exactly once (its result and its command commit together). */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
