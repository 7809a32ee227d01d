/**
 * The real entry points as processes: `npm start`'s server (start, print, serve, SIGTERM) and the CLI.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { openDatabase } from '../src/db/database';

const serverDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '..');
const dirs: string[] = [];

function dataDirFromTemplate(): string {
  const dir = mkdtempSync(join(tmpdir(), 'lendlock-proc-'));
  cpSync(inject('pgliteTemplateDir'), dir, { recursive: true });
  dirs.push(dir);
  return dir;
}

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, LOG_LEVEL: 'warn', ...extra };
}

function cli(args: string[], dataDir: string) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', ...args], {
    cwd: serverDir,
    env: env({ DATA_DIR: dataDir }),
    encoding: 'utf8',
    timeout: 60_000,
  });
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('processes', () => {
  it('refuses to start on a bad configuration with one clear line per bad value', () => {
    const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: env({ PORT: 'eighty', SESSION_TTL: 'soon', DATA_DIR: join(tmpdir(), 'never-created') }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toContain('Invalid configuration:');
    expect(result.stderr).toContain('PORT must be a whole number (got "eighty")');
    expect(result.stderr).toContain('SESSION_TTL must be a duration');
    expect(result.stderr).not.toMatch(/at .*\.ts:\d+/);
  });

  it('creates users of any level with the CLI, refusing bad input with the spec message', {
    timeout: 180_000,
  }, async () => {
    const dataDir = dataDirFromTemplate();
    const ok = cli(
      [
        'user',
        'create',
        '--email',
        'ops@lendlock.com',
        '--phone',
        '9123456780',
        '--level',
        'ADMIN',
        '--password',
        'Secret#123-lendlock',
      ],
      dataDir,
    );
    expect(ok.stderr).toBe('');
    expect(ok.stdout).toContain('Created ADMIN ops@lendlock.com.');
    const generated = cli(
      ['user', 'create', '--email', 'boss@lendlock.com', '--phone', '9123456781', '--level', 'SUPERADMIN'],
      dataDir,
    );
    expect(generated.stdout).toMatch(/^SUPERADMIN login: boss@lendlock\.com \/ \S{16,}$/m);
    const badPhone = cli(
      [
        'user',
        'create',
        '--email',
        'x@lendlock.com',
        '--phone',
        '12345',
        '--password',
        'Secret#123-lendlock',
      ],
      dataDir,
    );
    expect(badPhone.status).toBe(2);
    expect(badPhone.stderr.trim()).toBe('Enter a valid 10 digits number');
    const badDomain = cli(
      [
        'user',
        'create',
        '--email',
        'x@gmail.com',
        '--phone',
        '9123456782',
        '--password',
        'Secret#123-lendlock',
      ],
      dataDir,
    );
    expect(badDomain.stderr.trim()).toBe('Invalid email domain');
    const duplicate = cli(
      [
        'user',
        'create',
        '--email',
        'OPS@lendlock.com',
        '--phone',
        '9123456783',
        '--password',
        'Secret#123-lendlock',
      ],
      dataDir,
    );
    expect(duplicate.status).toBe(2);
    expect(duplicate.stderr).toContain('already exists');
    // Each account created is audited as the console's User Management does, by `cli`; a refusal is not.
    const database = await openDatabase({ dataDir });
    try {
      const rows = await database.db
        .selectFrom('audit_log')
        .select(['actor', 'target', 'result', 'details'])
        .where('action', '=', 'user.add')
        .orderBy('id')
        .execute();
      expect(rows).toEqual([
        {
          actor: 'cli',
          target: 'ops@lendlock.com',
          result: 'success',
          details: { userlevel: 'ADMIN', permissions: [], retailerPhone: null },
        },
        {
          actor: 'cli',
          target: 'boss@lendlock.com',
          result: 'success',
          details: { userlevel: 'SUPERADMIN', permissions: [], retailerPhone: null },
        },
      ]);
    } finally {
      await database.close();
    }
  });

  it('adds, lists and revokes enrollment secrets with the CLI, printing a secret only when it is added', {
    timeout: 180_000,
  }, async () => {
    const dataDir = dataDirFromTemplate();
    const added = cli(
      ['enrollment-secret', 'add', '--name', 'shop-12', '--expires', '2099-01-01T00:00:00Z'],
      dataDir,
    );
    expect(added.stderr).toBe('');
    const secret = /^Enrollment secret shop-12: (les_\S{32})$/m.exec(added.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(added.stdout).toContain('Copy it now: it is not shown again.');
    const listed = cli(['enrollment-secret', 'list'], dataDir);
    expect(listed.stdout).toMatch(/^shop-12\tactive\tcreated \S+ by cli\texpires 2099-01-01T00:00:00.000Z$/m);
    expect(listed.stdout).not.toContain(secret);
    const duplicate = cli(['enrollment-secret', 'add', '--name', 'shop-12'], dataDir);
    expect(duplicate.status).toBe(2);
    expect(duplicate.stderr.trim()).toBe('An active enrollment secret named shop-12 exists already.');
    const badName = cli(['enrollment-secret', 'add', '--name', 'has space'], dataDir);
    expect(badName.status).toBe(2);
    const revoked = cli(['enrollment-secret', 'revoke', '--name', 'shop-12'], dataDir);
    expect(revoked.stdout.trim()).toBe('Enrollment secret shop-12 revoked.');
    expect(cli(['enrollment-secret', 'list'], dataDir).stdout).toMatch(/^shop-12\trevoked\t/m);
    const again = cli(['enrollment-secret', 'revoke', '--name', 'shop-12'], dataDir);
    expect(again.status).toBe(2);
    expect(again.stderr.trim()).toBe('No active enrollment secret by that id or name.');
  });

  it('serves, prints the bootstrap credentials once, and shuts down gracefully on SIGTERM', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-proc-'));
    dirs.push(dataDir);
    cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
    const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: serverDir,
      env: env({
        DATA_DIR: dataDir,
        PORT: '0',
        HOST: '127.0.0.1',
        DEMO_DATA: 'on',
        MQTT_PORT: '0',
        DEMO_DEVICES: '6',
        // As npm start logs: the banner must stand out from the request logs at this level.
        LOG_LEVEL: 'info',
      }),
    });
    let out = '';
    child.stdout?.on('data', (chunk) => {
      out += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      out += chunk;
    });
    const url = await new Promise<string>((resolvePromise, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start: ${out}`)), 45_000);
      const check = setInterval(() => {
        const match = /Console: (http:\/\/\S+)/.exec(out);
        if (match?.[1]) {
          clearInterval(check);
          clearTimeout(timer);
          resolvePromise(match[1]);
        }
      }, 100);
    });
    expect(out).toMatch(/^SUPERADMIN login: superadmin@lendlock\.com \/ \S+$/m);
    // The banner is one block: no log line between the passwords, the demo fleet and the console's address.
    const lines = out.split('\n');
    const first = lines.findIndex((line) => line.startsWith('SUPERADMIN login: '));
    expect(lines.slice(first, first + 5).map((line) => line.split(':')[0])).toEqual([
      'SUPERADMIN login',
      'ADMIN login',
      'USER login',
      'Demo fleet',
      'Console',
    ]);
    expect(out).toMatch(/^ADMIN login: admin@lendlock\.com \/ \S+$/m);
    expect(out).toMatch(/^USER login: user@lendlock\.com \/ \S+$/m);
    const password = /^USER login: \S+ \/ (\S+)$/m.exec(out)?.[1];
    const login = await fetch(`${url}/api/login.php`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'user@lendlock.com', password }),
    });
    expect(login.status).toBe(200);
    expect((await fetch(`${url}/readyz`)).status).toBe(200);
    const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
  });
});
