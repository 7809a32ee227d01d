import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const readme = readFileSync(resolve(root, 'README.md'), 'utf8');

describe('README', () => {
  it('is read in ten minutes: at most 200 lines', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
  });

  it('gives the quick start in exactly the two commands', () => {
    const quickStart = readme.slice(readme.indexOf('## Quick start'));
    const block = /```[a-z]*\n([\s\S]*?)```/.exec(quickStart)?.[1] ?? '';
    const commands = block
      .split('\n')
      .map((line) => line.replace(/#.*$/, '').trim())
      .filter(Boolean);
    expect(commands).toEqual(['npm ci && npm start', 'npm test']);
  });

  it('says how to change the ports', () => {
    expect(readme).toContain('PORT=9080 MQTT_PORT=9884 npm start');
  });

  it('lists the design’s deviations from the spec and links the docs', () => {
    for (const doc of [
      'ARCHITECTURE',
      'operations',
      'configuration',
      'features',
      'tenancy',
      'device-protocol',
    ]) {
      expect(readme).toContain(`](docs/${doc}.md`);
    }
    for (const topic of ['Forgot password', 'Revoke Credit', 'Batches', 'Key Management', 'Exports']) {
      expect(readme.toLowerCase()).toContain(topic.toLowerCase());
    }
  });

  it('links only files that exist, in the README and the docs', () => {
    const pages = [
      'README.md',
      'docs/features.md',
      'docs/configuration.md',
      'docs/operations.md',
      'docs/CONTRIBUTING.md',
      'docs/ARCHITECTURE.md',
    ];
    const broken = pages.flatMap((page) => {
      const text = readFileSync(resolve(root, page), 'utf8');
      return [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] as string)
        .filter(
          (target) =>
            !/^[a-z]+:/.test(target) &&
            !target.startsWith('../shared/') &&
            !target.startsWith('../../shared/'),
        )
        .filter((target) => !existsSync(resolve(root, dirname(page), target)))
        .map((target) => `${page}: ${target}`);
    });
    expect(broken).toEqual([]);
  });
});
