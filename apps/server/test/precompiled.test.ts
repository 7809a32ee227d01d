/**
 * Precompiled queries: built and compiled once, run with each call's own values, on either database, in
 * or out of a transaction; a builder that uses an argument for anything but a value is refused.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { precompiled } from '../src/db/precompiled';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildUser } from './factories';

describe.each(databaseKinds())('precompiled queries on %s', (kind) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(() => database?.close());

  it('compiles once and binds each call’s values in their places', async () => {
    const admin = await buildUser(database, { userlevel: 'ADMIN' });
    const user = await buildUser(database, { userlevel: 'USER' });
    let builds = 0;
    const byEmail = precompiled((db, email: string, level: 'ADMIN' | 'USER') => {
      builds++;
      return db
        .selectFrom('users')
        .select(['email', 'userlevel'])
        .where('email', '=', email)
        .where('userstatus', '=', 'ACTIVE')
        .where('userlevel', '=', level);
    });
    expect(await byEmail(database.db, admin.email, 'ADMIN')).toEqual([
      { email: admin.email, userlevel: 'ADMIN' },
    ]);
    expect(await byEmail(database.db, user.email, 'USER')).toEqual([
      { email: user.email, userlevel: 'USER' },
    ]);
    expect(await byEmail(database.db, user.email, 'ADMIN')).toEqual([]);
    expect(await database.db.transaction().execute((trx) => byEmail(trx, admin.email, 'ADMIN'))).toHaveLength(
      1,
    );
    expect(builds).toBe(1);
  });

  it('refuses a builder that uses an argument to shape the query', async () => {
    const shaped = precompiled((db, column: string) =>
      db.selectFrom('users').select(sql.ref(String(column)).as('x')),
    );
    await expect(shaped(database.db, 'email')).rejects.toThrow('every argument must be a value of the query');
  });
});
