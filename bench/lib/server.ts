/**
 * A Lendlock server as a child process (`node apps/server/dist/main.js`, the bundle `npm run build`
 * makes), as production runs it: the benchmark's own work (clients, simulated devices) never shares its
 * event loop. `npm run bench` builds first; a benchmark run on its own needs `npm run build` once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiClient, type Credentials, SERVER_NODE_OPTIONS, stopChild } from '@lendlock/testkit';

export const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');

const serverDir = resolve(repoRoot, 'apps/server');

export const SUPERADMIN = { email: 'bench-superadmin@lendlock.com', password: 'bench-password-0123456789' };
export const ENROLLMENT_SECRET = 'bench-enrollment-secret-0123456789';

export interface ServerProcess {
  url: string;
  pid: number;
  child: ChildProcess;
  /** Everything the server printed (its log at LOG_LEVEL=warn). */
  output(): string;
  /** Resident memory of the process now, in bytes (Linux /proc). */
  rss(): number;
  stop(): Promise<void>;
}

/** Children still running: killed if the benchmark itself exits early. */
const children = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

/** What to undo if the run is interrupted (databases, directories); each entry removes itself when done. */
const cleanups = new Set<() => Promise<void>>();

export function onInterrupt(cleanup: () => Promise<void>): () => void {
  cleanups.add(cleanup);
  return () => cleanups.delete(cleanup);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    for (const child of children) child.kill('SIGKILL');
    const timer = setTimeout(() => process.exit(130), 10_000);
    Promise.allSettled([...cleanups].map((cleanup) => cleanup())).then(() => {
      clearTimeout(timer);
      process.exit(130);
    });
  });
}

export async function startServerProcess(
  env: Record<string, string>,
  extraNodeArgs: string[] = [],
): Promise<ServerProcess> {
  const nodeArgs = [
    ...SERVER_NODE_OPTIONS,
    ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean),
    ...extraNodeArgs,
  ];
  if (!existsSync(resolve(serverDir, 'dist/main.js')))
    throw new Error('apps/server/dist/main.js is missing: run `npm run build` first');
  const child = spawn(process.execPath, [...nodeArgs, 'dist/main.js'], {
    cwd: serverDir,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      DEMO_DATA: 'off',
      BOOTSTRAP_SUPERADMIN_EMAIL: SUPERADMIN.email,
      BOOTSTRAP_SUPERADMIN_PASSWORD: SUPERADMIN.password,
      ENROLLMENT_SECRET,
      MQTT_HOST: '127.0.0.1',
      // The benchmarks' Mosquitto is anonymous (their multiplexed fleet speaks for every device).
      MQTT_ALLOW_ANONYMOUS: 'on',
      // The benchmarks sign the bootstrap SUPERADMIN in with its password alone.
      MFA_REQUIRED_LEVELS: 'none',
      ...env,
      // For experiments: `BENCH_SERVER_ENV='DATABASE_POOL_SIZE=6 BATCH_WORKERS=1'` overrides the above.
      ...Object.fromEntries(
        (process.env.BENCH_SERVER_ENV ?? '')
          .split(' ')
          .filter(Boolean)
          .map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
      ),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out = (out + chunk).slice(-200_000);
  });
  child.stderr?.on('data', (chunk) => {
    out = (out + chunk).slice(-200_000);
  });
  const url = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`server did not start:\n${out}`));
    }, 120_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`server exited with ${code}:\n${out}`));
    });
    const check = setInterval(() => {
      const match = /Console: (http:\/\/\S+)/.exec(out);
      if (match?.[1]) {
        clearInterval(check);
        clearTimeout(timer);
        ok(match[1].replace('//localhost:', '//127.0.0.1:'));
      }
    }, 25);
  });
  const pid = child.pid as number;
  return {
    url,
    pid,
    child,
    output: () => out,
    rss: () => rssOf(pid),
    stop: () => stopChild(child),
  };
}

export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : 0;
  } catch {
    return 0;
  }
}

export const randomSuffix = () => randomBytes(4).toString('hex');

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The test kit's API client, signed in (by default as the bootstrap SUPERADMIN) from the SUPERADMIN console. */
export class Api extends ApiClient {
  static override async login(base: string, user: Credentials = SUPERADMIN): Promise<Api> {
    const client = await ApiClient.login(base, user, { 'x-login-client': 'superadmin' });
    return new Api(base, client.token);
  }
}
