/**
 * The alert rules operators load (deploy/prometheus/alerts.yml): valid for Prometheus, and each alert
 * fires on its condition and stays quiet otherwise (deploy/prometheus/alerts.test.yml), checked by
 * promtool itself when it is installed (CI installs Debian's `prometheus`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const deployDir = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../../deploy/prometheus');
const hasPromtool = spawnSync('promtool', ['--version']).error === undefined;
const NO_PROMTOOL = 'promtool is not installed (Debian: apt-get install prometheus; .ci/run installs it)';

const promtool = (...args: string[]) =>
  spawnSync('promtool', args, { cwd: deployDir, encoding: 'utf8', timeout: 60_000 });

describe('alert rules', () => {
  it('pass `promtool check rules`', (context) => {
    if (!hasPromtool) return context.skip(NO_PROMTOOL);
    const result = promtool('check', 'rules', 'alerts.yml');
    expect(result.stdout + result.stderr).toMatch(/SUCCESS: \d+ rules found/);
    expect(result.status, result.stdout + result.stderr).toBe(0);
  });

  it('fire on their condition and stay quiet otherwise (`promtool test rules`)', (context) => {
    if (!hasPromtool) return context.skip(NO_PROMTOOL);
    const result = promtool('test', 'rules', 'alerts.test.yml');
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('SUCCESS');
  });

  it('are each tested firing and quiet', () => {
    const rules = readFileSync(resolve(deployDir, 'alerts.yml'), 'utf8');
    const tests = readFileSync(resolve(deployDir, 'alerts.test.yml'), 'utf8');
    const alerts = [...rules.matchAll(/^\s+- alert: (\w+)$/gm)].map((m) => m[1] as string);
    expect(alerts.length).toBeGreaterThan(10);
    for (const alert of alerts) {
      const evaluations = [...tests.matchAll(new RegExp(`alertname: ${alert}\\n\\s+exp_alerts:(.*)`, 'g'))];
      expect(
        evaluations.some((m) => m[1]?.trim() === '[]'),
        `${alert} is tested quiet`,
      ).toBe(true);
      expect(
        evaluations.some((m) => m[1]?.trim() === ''),
        `${alert} is tested firing`,
      ).toBe(true);
    }
  });

  it('are the ones operations.md documents', () => {
    const rules = readFileSync(resolve(deployDir, 'alerts.yml'), 'utf8');
    const operations = readFileSync(resolve(deployDir, '../../docs/operations.md'), 'utf8');
    for (const [, alert] of rules.matchAll(/^\s+- alert: (\w+)$/gm))
      expect(operations.includes(`\`${alert}\``), `${alert} in operations.md`).toBe(true);
  });
});
