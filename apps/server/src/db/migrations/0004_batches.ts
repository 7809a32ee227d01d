import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE TABLE batches (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    feature text NOT NULL,
    command text NOT NULL,
    options jsonb NOT NULL DEFAULT '{}'::jsonb,
    file_name text,
    stored_file text,
    interface text NOT NULL DEFAULT 'B',
    user_label text NOT NULL,
    user_id integer,
    key_id integer,
    status text NOT NULL DEFAULT 'incomplete' CHECK (status IN ('incomplete', 'complete', 'cancelled')),
    total integer NOT NULL DEFAULT 0,
    valid integer NOT NULL DEFAULT 0,
    invalid integer NOT NULL DEFAULT 0,
    found integer NOT NULL DEFAULT 0,
    not_found integer NOT NULL DEFAULT 0,
    processed integer NOT NULL DEFAULT 0,
    last_imei text,
    remarks text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    completed_at timestamptz
  )`,
  `CREATE INDEX batches_feature ON batches (feature, id)`,
  `CREATE INDEX batches_incomplete ON batches (id) WHERE status = 'incomplete'`,
];

/** Batches: one row per uploaded file or device action to ALL, with its progress. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
