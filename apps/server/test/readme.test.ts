import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ENV_VARIABLES } from '../src/config';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');
const readme = readFileSync(resolve(root, 'README.md'), 'utf8');

describe('README', () => {
  it('documents every environment variable the server reads, in its table', () => {
    const missing = ENV_VARIABLES.filter((name) => !readme.includes(`| \`${name}\``));
    expect(missing).toEqual([]);
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

  it('lists the deviations from the spec and links the operations and architecture docs', () => {
    expect(readme).toContain('docs/ARCHITECTURE.md');
    expect(readme).toContain('docs/operations.md');
    for (const topic of ['Forgot password', 'Revoke Credit', 'Batches', 'Key Management', 'Exports']) {
      expect(readme.toLowerCase()).toContain(topic.toLowerCase());
    }
  });
});
