/**
 * Server-side prepared statements on PostgreSQL: parameterised queries are prepared once per connection
 * under a stable name and give the same answers; texts without parameters are sent as they are; a
 * connection names at most its limit; and with the switch off nothing is prepared.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../src/config';
import { openDatabase } from '../src/db/database';
import { statementName, usePreparedStatements } from '../src/db/prepared';
import { TENANT_STATEMENT } from '../src/db/tenant-dialect';

const postgresUrl = inject('postgresUrl');

describe('prepared statements (a client of its own)', () => {
  it.skipIf(!postgresUrl)('prepares parameterised texts once under their name, up to the limit', async () => {
    const client = new pg.Client({ connectionString: postgresUrl ?? undefined });
    await client.connect();
    try {
      usePreparedStatements(client, 2);
      const prepared = async () =>
        (await client.query('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map((r) => r.name);
      expect(await prepared()).toEqual([]);
      const first = 'SELECT $1::int + 1 AS n';
      expect((await client.query(first, [1])).rows).toEqual([{ n: 2 }]);
      expect((await client.query(first, [41])).rows).toEqual([{ n: 42 }]);
      expect(await prepared()).toEqual([statementName(first)]);
      // A text without parameters is not prepared; nor a third text beyond the limit of 2.
      await client.query('SELECT 1');
      const second = 'SELECT $1::text AS s';
      const third = 'SELECT $1::text || $2::text AS s';
      expect((await client.query(second, ['a'])).rows).toEqual([{ s: 'a' }]);
      expect((await client.query(third, ['a', 'b'])).rows).toEqual([{ s: 'ab' }]);
      expect((await prepared()).sort()).toEqual([statementName(first), statementName(second)].sort());
      // A text that fails to parse is reported and not remembered as prepared.
      await expect(client.query('SELECT $1::int FROM nowhere', [1])).rejects.toThrow(/nowhere/);
    } finally {
      await client.end();
    }
  });
});

describe('prepared statements (the server database)', () => {
  const withDatabase = async (preparedStatements: boolean | undefined, run: (names: string[]) => void) => {
    const name = `lendlock_p_${randomBytes(5).toString('hex')}`;
    const admin = new pg.Client({ connectionString: postgresUrl ?? undefined });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(postgresUrl as string);
    url.pathname = `/${name}`;
    const database = await openDatabase({ databaseUrl: url.toString(), dataDir: '', preparedStatements });
    try {
      const names = await database.db.transaction().execute(async (trx) => {
        const imei = '356938035643809';
        for (let i = 0; i < 3; i++) {
          const row = await sql<{ v: string }>`SELECT ${imei}::text AS v`.execute(trx);
          expect(row.rows[0]?.v).toBe(imei);
        }
        const rows = await sql<{ name: string }>`SELECT name FROM pg_prepared_statements`.execute(trx);
        return rows.rows.map((r) => r.name);
      });
      run(names);
    } finally {
      await database.close();
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  };

  it.skipIf(!postgresUrl)('are on by default', async () => {
    await withDatabase(undefined, (names) =>
      // Beside the connection's own tenant setting (db/tenant-dialect.ts), also prepared.
      expect(names.filter((n) => n !== statementName(TENANT_STATEMENT))).toEqual([
        statementName('SELECT $1::text AS v'),
      ]),
    );
  });

  it.skipIf(!postgresUrl)('are off with DATABASE_PREPARED_STATEMENTS=off', async () => {
    expect(loadConfig({ DATABASE_PREPARED_STATEMENTS: 'off' }).databasePreparedStatements).toBe(false);
    await withDatabase(false, (names) => expect(names).toEqual([]));
  });

  it('the switch takes on or off and nothing else', () => {
    expect(loadConfig({}).databasePreparedStatements).toBe(true);
    expect(() => loadConfig({ DATABASE_PREPARED_STATEMENTS: 'yes' })).toThrow(
      'DATABASE_PREPARED_STATEMENTS must be on or off (got "yes")',
    );
  });
});
