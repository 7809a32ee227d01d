/**
 * The house rule (docs/ARCHITECTURE.md): queries live only in `repository.ts` files. Routes declare and
 * delegate, services apply rules; neither holds SQL or a query builder. This test reads every `routes.ts`
 * and `service.ts` under apps/server/src and names the lines that break the rule.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const src = resolve(fileURLToPath(new URL('.', import.meta.url)), '../src');

function filesNamed(dir: string, names: readonly string[]): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return filesNamed(path, names);
    return names.includes(entry.name) ? [path] : [];
  });
}

/** What a query looks like: Kysely's sql template (and sql.raw/ref…), its builders, a transaction begun. */
const QUERY =
  /\bsql\s*(<[^`]*?>)?\s*`|\bsql\.(raw|ref|table|id|lit|join|val)\(|\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\.transaction\(\)/;

export function queryLines(text: string): string[] {
  return text
    .split('\n')
    .map((line, index) => ({ line, number: index + 1 }))
    .filter(({ line }) => !/^\s*(\*|\/\/|\/\*)/.test(line) && QUERY.test(line))
    .map(({ line, number }) => `${number}: ${line.trim()}`);
}

describe('queries live in repository.ts files only', () => {
  it('the pattern catches each kind of query and leaves calls of repository functions alone', () => {
    for (const query of [
      'await sql`SELECT 1`.execute(db);',
      'const n = sql<number>`count(*)::int`;',
      "db.selectFrom('devices').selectAll()",
      "trx.insertInto('commands').values(row)",
      "db.updateTable('batches').set({ paused: true })",
      "db.deleteFrom('sessions')",
      'await db.transaction().execute(fn)',
      'sql.raw(statement)',
    ])
      expect(queryLines(query), query).toHaveLength(1);
    for (const call of [
      'await findDevice(db, imei)',
      'await inTransaction(db, (trx) => recordCommandSet(trx, requests, options))',
      "// a comment about db.selectFrom('devices')",
      ' * the statement sql`…` in a doc comment',
    ])
      expect(queryLines(call), call).toEqual([]);
  });

  it('no routes.ts or service.ts under apps/server/src runs a query', () => {
    const files = filesNamed(src, ['routes.ts', 'service.ts']);
    expect(files.length).toBeGreaterThan(5);
    const offenders = Object.fromEntries(
      files
        .map((file) => [relative(src, file), queryLines(readFileSync(file, 'utf8'))] as const)
        .filter(([, lines]) => lines.length > 0),
    );
    expect(offenders).toEqual({});
  });
});
