import type { FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { bootstrap, credentialsLine, DEMO_USER_PERMISSIONS } from '../src/bootstrap';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildTestApp, loginAs } from './factories';

describe.each(databaseKinds())('first start on an empty %s database', (kind) => {
  let database: TestDatabase | undefined;
  let app: FastifyInstance | undefined;
  afterEach(async () => {
    await app?.close();
    await database?.close();
    app = undefined;
    database = undefined;
  });

  it('creates a SUPERADMIN with a generated password that signs in, printed once', async () => {
    database = await openTestDatabase(kind);
    const config = buildConfig({ demoData: 'off' });
    const first = await bootstrap(config, database);
    expect(first.created).toHaveLength(1);
    const [account] = first.created;
    expect(account?.level).toBe('SUPERADMIN');
    expect(account?.email).toBe('superadmin@lendlock.com');
    expect(account?.password?.length).toBeGreaterThanOrEqual(16);
    expect(credentialsLine('SUPERADMIN', 'a@b.c', 'pw')).toBe('SUPERADMIN login: a@b.c / pw');
    // A second start prints nothing and creates nothing.
    expect((await bootstrap(config, database)).created).toEqual([]);
    app = await buildTestApp(database);
    const session = await loginAs(
      app,
      { email: account?.email ?? '', password: account?.password ?? '' },
      {
        'x-login-client': 'superadmin',
      },
    );
    expect(session.userlevel).toBe('SUPERADMIN');
  });

  it('uses BOOTSTRAP_SUPERADMIN_EMAIL and BOOTSTRAP_SUPERADMIN_PASSWORD when given', async () => {
    database = await openTestDatabase(kind);
    const config = buildConfig({
      demoData: 'off',
      bootstrapSuperadminEmail: 'root@example.org',
      bootstrapSuperadminPassword: 'correct horse battery',
    });
    const result = await bootstrap(config, database);
    expect(result.created).toEqual([{ level: 'SUPERADMIN', email: 'root@example.org', password: null }]);
    app = await buildTestApp(database);
    expect(
      (await loginAs(app, { email: 'root@example.org', password: 'correct horse battery' })).userlevel,
    ).toBe('SUPERADMIN');
  });

  it(
    kind === 'pglite'
      ? 'creates a demo ADMIN and USER (with a few permissions) on the embedded database'
      : 'never invents demo users on PostgreSQL unless DEMO_DATA=on',
    async () => {
      database = await openTestDatabase(kind);
      const result = await bootstrap(buildConfig({ demoData: 'auto' }), database);
      if (kind === 'postgres') {
        expect(result.created.map((c) => c.level)).toEqual(['SUPERADMIN']);
        return;
      }
      expect(result.created.map((c) => c.level)).toEqual(['SUPERADMIN', 'ADMIN', 'USER']);
      app = await buildTestApp(database);
      const user = result.created[2];
      const session = await loginAs(app, { email: user?.email ?? '', password: user?.password ?? '' });
      expect(session.permissions.map((p) => p.permission_name).sort()).toEqual(
        [...DEMO_USER_PERMISSIONS].sort(),
      );
      const passwords = new Set(result.created.map((c) => c.password));
      expect(passwords.size).toBe(3);
    },
  );
});
