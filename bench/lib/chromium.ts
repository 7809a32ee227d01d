/**
 * For the benchmarks that measure the console in Chromium (launched as the browser tests launch it,
 * `launchBrowser` of e2e/support/chromium.ts): a module of the contract bundled for a page as the
 * console ships it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { build } from 'vite';
import { repoRoot } from './server';

/**
 * `entry` (a path from the repository's root) bundled, minified, as a script that sets the global
 * `name` to its exports, for `page.addScriptTag({ content })`.
 */
export async function browserBundle(entry: string, name: string): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'lendlock-bench-bundle-'));
  try {
    await build({
      configFile: false,
      logLevel: 'silent',
      root: repoRoot,
      build: {
        outDir: out,
        emptyOutDir: true,
        minify: true,
        lib: { entry: resolve(repoRoot, entry), formats: ['iife'], name, fileName: () => 'bundle.js' },
      },
    });
    return readFileSync(join(out, 'bundle.js'), 'utf8');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
