/**
 * `npm run cli -- mfa reset`: the way back for an account nobody in the console may reset, the last
 * SUPERADMIN who lost their phone and their recovery codes. Run as the operator runs it, as a process.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MFA_MESSAGES, type Session } from '@lendlock/contract';
import { generate } from 'otplib';
import { describe, expect, inject, it } from 'vitest';
import { buildApp } from '../src/app';
import { type Database, openDatabase } from '../src/db/database';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig, buildUser } from './factories';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: serverDir,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

/** A database the CLI can open too: PGlite allows one process, so the test closes its own first. */
async function cliDatabase(kind: 'pglite' | 'postgres') {
  if (kind === 'postgres') {
    const database = await openTestDatabase(kind);
    const env = { DATABASE_URL: database.location.databaseUrl ?? '' };
    return { database, env, beforeCli: async () => database, done: () => database.close() };
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-mfa-cli-'));
  cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
  let database: Database = await openDatabase({ dataDir });
  return {
    database: { ...database, location: { dataDir } } as TestDatabase,
    env: { DATA_DIR: dataDir },
    beforeCli: async () => {
      await database.close();
      return {
        reopen: async () => {
          database = await openDatabase({ dataDir });
          return database;
        },
      };
    },
    done: async () => {
      await database.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

describe.each(databaseKinds())('mfa reset from the CLI on %s', (kind) => {
  it('resets the last SUPERADMIN, audited; an unknown email fails with a clear line', async () => {
    const target = await cliDatabase(kind);
    try {
      const app = await buildApp({
        config: buildConfig({ mfaRequiredLevels: ['ADMIN', 'SUPERADMIN'] }),
        database: target.database,
        logger: false,
        deviceChannel: false,
      });
      await app.ready();
      const root = await buildUser(target.database, { userlevel: 'SUPERADMIN' });
      const login = async () =>
        (
          await app.inject({
            method: 'POST',
            url: '/api/login.php',
            payload: { email: root.email, password: root.password },
          })
        ).json() as Session & { mfaToken?: string };
      const { token } = await login();
      const started = await app.inject({
        method: 'POST',
        url: '/api/v2/mfa/enrol/start',
        headers: { 'x-api-key': token },
        payload: {},
      });
      const secret = started.json().secret.replaceAll(' ', '');
      await app.inject({
        method: 'POST',
        url: '/api/v2/mfa/enrol/confirm',
        headers: { 'x-api-key': token },
        payload: { code: await generate({ secret }) },
      });
      expect((await login()).status).toBe('mfa_required');
      await app.close();

      const handle = await target.beforeCli();
      const reset = cli(['mfa', 'reset', '--email', root.email], target.env);
      expect(reset.stderr).toBe('');
      expect(reset.stdout.trim()).toBe(MFA_MESSAGES.reset);
      const unknown = cli(['mfa', 'reset', '--email', 'nobody@lendlock.com'], target.env);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr.trim()).toBe('User not found');

      const db = ('reopen' in handle ? await handle.reopen() : handle).db;
      expect(
        await db.selectFrom('user_mfa').select('user_id').where('user_id', '=', root.id).execute(),
      ).toEqual([]);
      const audit = await db
        .selectFrom('audit_log')
        .select(['actor', 'result'])
        .where('action', '=', 'mfa.reset')
        .where('target', '=', root.email)
        .execute();
      expect(audit).toEqual([{ actor: 'cli', result: 'success' }]);
    } finally {
      await target.done();
    }
    // Two CLI processes, each compiling its TypeScript and opening the database.
  }, 180_000);
});
