import type { Kysely, Transaction } from 'kysely';
import type { DB } from './types';

/** Runs `fn` in a transaction: the caller's one when `db` already is a transaction, a new one otherwise. */
export function inTransaction<T>(db: Kysely<DB>, fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<DB>) : db.transaction().execute(fn);
}
