/**
 * Server-side prepared statements for PostgreSQL. Kysely hands node-postgres a query's text and values;
 * this names each parameterised text (by its hash) so that PostgreSQL parses it once per connection and,
 * after a few executions, reuses its plan. On the single-command path PostgreSQL otherwise spent about
 * half of its CPU parsing and planning the same handful of statements (docs/performance.md).
 *
 * Texts without parameters (BEGIN, COMMIT, migrations of several statements) are sent as they are. A
 * connection names at most `limit` texts: a query whose text varies with its input (an IN list of any
 * length) must not fill the server's memory with statements used once.
 */
import { createHash } from 'node:crypto';
import type pg from 'pg';

export const MAX_PREPARED_PER_CONNECTION = 500;

/** The statement name of a query text: stable across connections and instances. */
export function statementName(text: string): string {
  return `ll_${createHash('sha1').update(text).digest('base64url')}`;
}

/** Makes `client` run its parameterised queries as named prepared statements. */
export function usePreparedStatements(client: pg.ClientBase, limit = MAX_PREPARED_PER_CONNECTION): void {
  const names = new Map<string, string>();
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  const named = (text: string): string | undefined => {
    const known = names.get(text);
    if (known || names.size >= limit) return known;
    const name = statementName(text);
    names.set(text, name);
    return name;
  };
  // biome-ignore lint/suspicious/noExplicitAny: pg's query() has a dozen overloads; this wraps them all.
  (client as any).query = (config: unknown, values?: unknown, callback?: unknown) => {
    if (typeof config === 'string' && Array.isArray(values) && values.length > 0 && callback === undefined) {
      const name = named(config);
      if (name) return query({ name, text: config, values });
    }
    return callback === undefined ? query(config, values) : query(config, values, callback);
  };
}
