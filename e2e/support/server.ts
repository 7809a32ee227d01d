/** Runs the real server (apps/server) for browser tests: its CLI against a DATA_DIR, and the server itself. */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, REPO_ROOT, SERVER_NODE_OPTIONS, stopChild } from '@lendlock/testkit';

const CLI = 'apps/server/src/cli.ts';
/** The server as `npm start` runs it: the bundle that `npm run build` makes (npm test builds it first). */
const MAIN = 'apps/server/dist/main.js';

const baseEnv = (dataDir: string): NodeJS.ProcessEnv => ({
  ...process.env,
  DATA_DIR: dataDir,
  DEMO_DATA: 'off',
  LOG_LEVEL: 'warn',
  HOST: '127.0.0.1',
  // The suites sign ADMINs and SUPERADMINs in with a password alone; e2e/mfa.test.ts turns MFA on.
  MFA_REQUIRED_LEVELS: 'none',
  // Every console call must make an authority decision (authz/decisions.ts).
  AUTHZ_CHECK: 'enforce',
});

/** `node --import tsx apps/server/src/cli.ts …args` against `dataDir` (the server must not be running on it). */
export async function runCli(dataDir: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', CLI, ...args], {
      cwd: REPO_ROOT,
      env: baseEnv(dataDir),
      maxBuffer: 10 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const { stderr, stdout } = error as { stderr?: string; stdout?: string };
    throw new Error(`cli ${args.join(' ')} failed:\n${stdout ?? ''}${stderr ?? ''}`, { cause: error });
  }
}

export interface RunningServer {
  baseUrl: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** Copies the template database and starts a server on it, resolved once `GET /readyz` answers 200. */
export async function startServer(options: {
  templateDataDir: string;
  sessionTtl?: string;
  /** Extra environment for the server, given its base URL (e.g. SMTP_URL and PUBLIC_URL). */
  env?: (baseUrl: string) => Record<string, string>;
}): Promise<RunningServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-'));
  cpSync(options.templateDataDir, dataDir, { recursive: true });
  const [port, mqttPort] = [await freePort(), await freePort()];
  const baseUrl = `http://127.0.0.1:${port}`;
  // …with the Node options `npm start` gives it (SERVER_NODE_OPTIONS).
  const child = spawn(process.execPath, [...SERVER_NODE_OPTIONS, MAIN], {
    cwd: REPO_ROOT,
    env: {
      ...baseEnv(dataDir),
      PORT: String(port),
      MQTT_PORT: String(mqttPort),
      SESSION_TTL: options.sessionTtl ?? '8h',
      ...options.env?.(baseUrl),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));

  const stop = async () => {
    await stopChild(child);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await waitForReady(baseUrl, child, () => output);
  } catch (error) {
    await stop();
    throw error;
  }
  return { baseUrl, dataDir, stop };
}

async function waitForReady(baseUrl: string, child: ChildProcess, output: () => string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`server exited with ${child.exitCode}:\n${output()}`);
    try {
      if ((await fetch(`${baseUrl}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`server not ready within 90 s:\n${output()}`);
}
