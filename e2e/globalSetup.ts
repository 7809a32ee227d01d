/**
 * Once per run: make sure the console is built, then migrate a template database and create the test
 * accounts in it. Each test server starts on a copy (a fresh embedded database costs seconds and memory).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '@lendlock/testkit';
import type { TestProject } from 'vitest/node';
import { runCli } from './support/server';
import { PASSWORD, USERS } from './support/users';

declare module 'vitest' {
  export interface ProvidedContext {
    templateDataDir: string;
  }
}

export default async function setup(project: TestProject) {
  if (!existsSync(join(REPO_ROOT, 'apps/web/dist/index.html'))) {
    execFileSync('npm', ['run', 'build', '-w', '@lendlock/web'], { cwd: REPO_ROOT, stdio: 'inherit' });
  }
  const templateDataDir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-template-'));
  await runCli(templateDataDir, ['migrate']);
  for (const user of Object.values(USERS)) {
    const args = ['user', 'create', '--email', user.email, '--phone', user.phone, '--level', user.level];
    args.push('--password', PASSWORD);
    if (user.permissions.length > 0) args.push('--permissions', user.permissions.join(','));
    await runCli(templateDataDir, args);
  }
  project.provide('templateDataDir', templateDataDir);
  return () => rmSync(templateDataDir, { recursive: true, force: true });
}
