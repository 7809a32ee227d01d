import { type Kysely, sql } from 'kysely';

/**
 * A batch's work is stored as chunks, a row each (up to 500 IMEIs in arrays), and `batch_items` holds
 * only processed rows, each written once with its result. Before, every IMEI was a `batch_items` row
 * inserted at upload (with an entry in a partial index of unprocessed rows), locked by its chunk, and
 * updated with its result: three writes and three index entries per IMEI, a fifth of the database's
 * work in a 100,000-IMEI batch. A chunk is now claimed by locking its one row (SKIP LOCKED), and deleted
 * in the transaction that inserts its results and commands, so a crash still leaves each IMEI processed
 * exactly once or not at all. Batches under way keep their unprocessed rows: they move into chunks.
 */
const STATEMENTS = [
  `CREATE TABLE batch_chunks (
    batch_id bigint NOT NULL REFERENCES batches (id) ON DELETE CASCADE,
    first_seq integer NOT NULL,
    seqs integer[] NOT NULL,
    imeis text[] NOT NULL,
    names text[],
    amounts text[],
    dates text[],
    templates text[],
    headers text[],
    messages text[],
    PRIMARY KEY (batch_id, first_seq),
    CHECK (cardinality(imeis) = cardinality(seqs) AND array_position(imeis, NULL) IS NULL)
  )`,
  `INSERT INTO batch_chunks (batch_id, first_seq, seqs, imeis, names, amounts, dates, templates, headers, messages)
   SELECT batch_id, min(seq), array_agg(seq ORDER BY seq), array_agg(imei ORDER BY seq),
          array_agg(name ORDER BY seq), array_agg(amount ORDER BY seq), array_agg(date ORDER BY seq),
          array_agg(template ORDER BY seq), array_agg(header ORDER BY seq), array_agg(message ORDER BY seq)
   FROM batch_items WHERE result IS NULL
   GROUP BY batch_id, (seq - 1) / 500`,
  `DELETE FROM batch_items WHERE result IS NULL`,
  `DROP INDEX IF EXISTS batch_items_todo`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
