import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `CREATE INDEX commands_command_created ON commands (command, created_at, id)`,
  `CREATE INDEX registrations_match_created ON registrations (match_status, created_at, id)`,
  `CREATE INDEX batches_feature_created ON batches (feature, created_at, id)`,
];

/** Indexes for the reports' date-range queries on large tables. */
export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
