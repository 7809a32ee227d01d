/**
 * The docs a newcomer reads stay true to the code: the configuration reference is what the schema
 * generates, and the architecture page has a row for every server module.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_FILE, formatDuration, generateConfigurationDoc } from '../src/config-docs';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

describe('docs/configuration.md', () => {
  it('is what the configuration schema generates (run `npm run docs:config` after changing config.ts)', () => {
    const committed = readFileSync(CONFIGURATION_FILE, 'utf8');
    expect(
      committed === generateConfigurationDoc(),
      'docs/configuration.md differs from the schema: run `npm run docs:config`',
    ).toBe(true);
  });

  it('shows each default as the variable is written', () => {
    const doc = generateConfigurationDoc();
    expect(doc).toContain('| `PORT` | `8080` |');
    expect(doc).toContain('| `SESSION_TTL` | `8h` |');
    expect(doc).toContain('| `COMMAND_TTL` | `72h` |');
    expect(doc).toContain('| `UPLOAD_RETENTION` | `90d` |');
    expect(doc).toContain('| `MFA_REQUIRED_LEVELS` | `ADMIN,SUPERADMIN` |');
    expect(doc).toContain('| `DATABASE_URL` | unset: embedded PGlite in `DATA_DIR` |');
    expect([1500, 45_000, 15 * 60_000, 24 * 3_600_000, 14 * 86_400_000].map(formatDuration)).toEqual([
      '1500ms',
      '45s',
      '15m',
      '24h',
      '14d',
    ]);
  });
});

describe('docs/ARCHITECTURE.md', () => {
  it('has a row for every module of the server', () => {
    const architecture = readFileSync(resolve(root, 'docs/ARCHITECTURE.md'), 'utf8');
    const modules = readdirSync(resolve(root, 'apps/server/src/modules'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    expect(modules.length).toBeGreaterThan(0);
    const missing = modules.filter(
      (name) => !new RegExp(`^\\| \`modules/${name}/\` +\\|`, 'm').test(architecture),
    );
    expect(missing).toEqual([]);
  });
});
