import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root directory (ends with a slash). */
export const REPO_ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The Node options `npm start` gives the server (apps/server/package.json, `config.node_options`). */
export const SERVER_NODE_OPTIONS: string[] = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'apps/server/package.json'), 'utf8')).config?.node_options ?? ''
)
  .split(' ')
  .filter(Boolean);

/** Stops a child process as an operator would: SIGTERM, then SIGKILL if it is still running after 15 s. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
