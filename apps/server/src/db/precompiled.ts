/**
 * Queries of a fixed shape, compiled by Kysely once. Building and compiling a query with Kysely's builder
 * costs tens of microseconds, on every call; for the queries every request runs (the caller's principal)
 * that was a tenth of the server's CPU per request. A precompiled query is built once with a stand-in for
 * each argument, and each call binds the arguments in their places in the compiled text.
 *
 * The builder must use its arguments only as values (compared, inserted), never to decide the shape of
 * the query: compiling throws if an argument does not end up as one of the query's parameters.
 */
import { type Compilable, CompiledQuery, type Kysely } from 'kysely';
import type { DB } from './types';

/** Stands for the argument at `index` while the query is compiled. */
class Slot {
  constructor(readonly index: number) {}
}

export function precompiled<Args extends unknown[], Row>(
  build: (db: Kysely<DB>, ...args: Args) => Compilable<Row>,
): (db: Kysely<DB>, ...args: Args) => Promise<Row[]> {
  let compiled: { sql: string; parameters: readonly unknown[] } | null = null;
  return async (db, ...args) => {
    if (!compiled) {
      const slots = args.map((_, index) => new Slot(index)) as Args;
      const query = build(db, ...slots).compile();
      const bound = new Set(query.parameters.filter((p) => p instanceof Slot).map((p) => (p as Slot).index));
      if (bound.size !== args.length)
        throw new Error('precompiled: every argument must be a value of the query');
      compiled = { sql: query.sql, parameters: query.parameters };
    }
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, parameters));
    return result.rows;
  };
}
