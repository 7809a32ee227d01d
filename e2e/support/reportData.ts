/**
 * Seeded data for the Reports browser tests. The server's demo lays down a few weeks of history
 * (registrations matched and unmatched, de-enrollments and re-registrations, releases, commands of every
 * kind from the console, the API and batches) — but only on a first start with an empty database. So a
 * server is started once on an empty DATA_DIR with DEMO_DATA=on (the SUPERADMIN of the test accounts as
 * its bootstrap account), stopped when the demo says it is running, and the other test accounts are added
 * with the CLI. Test servers then start on copies with the demo off, so every count holds still.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, REPO_ROOT, SERVER_NODE_OPTIONS, stopChild } from '@lendlock/testkit';
import { runCli } from './server';
import { PASSWORD, USERS } from './users';

/** A data directory holding the demo's history and the test accounts; `dispose` removes it. */
export interface SeededTemplate {
  dir: string;
  dispose(): void;
}

export async function seedDemoHistory(options: { devices: number }): Promise<SeededTemplate> {
  const dir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-reports-'));
  const dispose = () => rmSync(dir, { recursive: true, force: true });
  try {
    const [port, mqttPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, 'apps/server/dist/main.js'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATA_DIR: dir,
        HOST: '127.0.0.1',
        PORT: String(port),
        MQTT_PORT: String(mqttPort),
        LOG_LEVEL: 'warn',
        AUTHZ_CHECK: 'enforce',
        DEMO_DATA: 'on',
        DEMO_DEVICES: String(options.devices),
        BOOTSTRAP_SUPERADMIN_EMAIL: USERS.superadmin.email,
        BOOTSTRAP_SUPERADMIN_PASSWORD: PASSWORD,
        // The demo's own ADMIN and USER take the first domain: keep them apart from the test accounts.
        ALLOWED_EMAIL_DOMAINS: 'demo.lendlock.com,lendlock.com,lendlock.in',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // The server prints 'Demo fleet: …' once the history is laid down and the fleet runs.
    await waitForOutput(child, /^Demo fleet: /m, 180_000);
    await stopChild(child);
    for (const user of [USERS.admin, USERS.locker, USERS.viewer]) {
      const args = ['user', 'create', '--email', user.email, '--phone', user.phone, '--level', user.level];
      args.push('--password', PASSWORD);
      if (user.permissions.length > 0) args.push('--permissions', user.permissions.join(','));
      await runCli(dir, args);
    }
    return { dir, dispose };
  } catch (error) {
    dispose();
    throw error;
  }
}

function waitForOutput(child: ChildProcess, pattern: RegExp, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the demo did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (pattern.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code} before the demo started:\n${output}`));
    });
  });
}

/** YYYY-MM-DD of `days` days from now in UTC (the servers' report time zone). */
export function utcDay(days = 0): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);
}
