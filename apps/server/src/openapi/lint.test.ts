/**
 * `redocly lint` with the recommended ruleset (redocly.yaml at the root; a rule is switched off there only
 * with its reason) finds nothing in the committed docs/openapi.json: no error and no warning.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { OPENAPI_FILE } from '../openapi';

const ROOT = fileURLToPath(new URL('../../../..', import.meta.url));
const REDOCLY = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');

interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: { ruleId: string; message: string; location: { pointer: string }[] }[];
}

describe('redocly lint', () => {
  it('passes the recommended ruleset on docs/openapi.json with no error and no warning', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        REDOCLY,
        'lint',
        OPENAPI_FILE,
        '--config',
        `${ROOT}redocly.yaml`,
        '--format=json',
        '--max-problems=1000',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', CI: 'true' },
        maxBuffer: 16 * 1024 * 1024,
      },
    ).catch((error: { stdout?: string; stderr?: string }) => {
      // A failed lint exits non-zero; its report is still on stdout.
      if (error.stdout) return { stdout: error.stdout };
      throw new Error(`redocly did not run: ${error.stderr ?? String(error)}`);
    });
    const report = JSON.parse(stdout.slice(stdout.indexOf('{'))) as LintReport;
    const problems = report.problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 60_000);
});
