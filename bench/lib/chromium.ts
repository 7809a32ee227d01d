/**
 * Chromium for the benchmarks that measure the console where operators wait: Debian's Chromium
 * (CHROMIUM_PATH, /usr/bin/chromium by default; never a downloaded browser) with the flags this closed
 * network needs, and a module of the contract bundled for a page as the console ships it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { build } from 'vite';
import { repoRoot } from './server';

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

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
