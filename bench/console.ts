/**
 * Benchmark 6, the console: the initial JavaScript (gzip) of the login route and of the signed-in shell,
 * read from the production build, and the time Chromium takes to validate a 1,000,000-row batch CSV
 * with the contract's validator (the one the console runs on the chosen file).
 *
 *   node --import tsx bench/console.ts
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import { launchBrowser } from '../e2e/support/chromium';
import { browserBundle } from './lib/chromium';
import { type Figure, fmt } from './lib/report';
import { repoRoot } from './lib/server';

const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const dist = resolve(repoRoot, 'apps/web/dist');

/** Relative module specifiers a chunk imports statically (`import … from`, `import "…"`, `export … from`). */
function staticImports(code: string): string[] {
  const found = new Set<string>();
  const pattern = /\b(?:import|export)\s*(?:[\w$*{}\s,]*?\bfrom\s*)?["'`](\.\.?\/[^"'`]+\.js)["'`]/g;
  for (const match of code.matchAll(pattern)) {
    // `import("./x.js")` is dynamic: the pattern cannot match it (a parenthesis comes first).
    if (match[1]) found.add(match[1]);
  }
  return [...found];
}

/** A chunk and every chunk it imports statically, transitively (file names under dist/assets). */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const code = readFileSync(join(dist, 'assets', file), 'utf8');
    for (const spec of staticImports(code)) visit(spec.replace(/^\.\//, ''));
  };
  visit(entry);
  return seen;
}

const gzipped = (files: Iterable<string>) =>
  [...files].reduce((sum, file) => sum + gzipSync(readFileSync(join(dist, 'assets', file))).length, 0);

/** Relative chunks a chunk imports with `import("./…")` (lazily). */
function dynamicImports(code: string): string[] {
  return [...code.matchAll(/\bimport\(\s*["'`](\.\.?\/[^"'`]+\.js)["'`]\s*\)/g)].map((m) => m[1] as string);
}

/**
 * The login route's JavaScript: the entry of dist/index.html with its static imports, and what the entry
 * itself loads at start-up (this console's entry configures zod, then imports the app's bootstrap,
 * which holds the router and the login page; every other page is a lazy chunk of the router). The
 * signed-in shell adds the lazily loaded layout chunk (Shell) and its static imports.
 */
function bundleSizes(): { login: number; shell: number; loginFiles: string[]; shellFiles: number } {
  const html = readFileSync(join(dist, 'index.html'), 'utf8');
  const entry = /<script type="module"[^>]*src="\/assets\/([^"]+\.js)"/.exec(html)?.[1];
  if (!entry) throw new Error('no module entry in dist/index.html');
  const preloads = [...html.matchAll(/<link rel="modulepreload"[^>]*href="\/assets\/([^"]+\.js)"/g)].map(
    (m) => m[1] as string,
  );
  const login = new Set([entry, ...preloads].flatMap((file) => [...staticGraph(file)]));
  const atStart = dynamicImports(readFileSync(join(dist, 'assets', entry), 'utf8'));
  for (const spec of atStart) for (const file of staticGraph(spec.replace(/^\.\//, ''))) login.add(file);
  const shellChunk = readdirSync(join(dist, 'assets')).find((f) => /^Shell-[\w-]+\.js$/.test(f));
  if (!shellChunk) throw new Error('no Shell chunk in dist/assets (the lazily loaded layout)');
  const shell = new Set([...login, ...staticGraph(shellChunk)]);
  return { login: gzipped(login), shell: gzipped(shell), loginFiles: [...login], shellFiles: shell.size };
}

async function validateInBrowser(rows: number): Promise<{ ms: number; valid: number; mb: number }> {
  // The contract's CSV validator bundled for the browser, as the console ships it (Papa Parse included).
  const bundle = await browserBundle('packages/contract/src/csv/imeiCsv.ts', 'LendlockCsv');
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.setContent('<!doctype html><title>csv</title>');
    await page.addScriptTag({ content: bundle });
    const run = () =>
      page.evaluate(async (n) => {
        // The file is made first (as if chosen in the file picker); only the validation is timed.
        const lines = new Array<string>(n + 1);
        lines[0] = 'Sno,IMEI1';
        for (let i = 1; i <= n; i++) lines[i] = `${i},35${String(i).padStart(13, '0')}`;
        const file = new File([`${lines.join('\r\n')}\r\n`], 'devices.csv', { type: 'text/csv' });
        const api = (window as unknown as { LendlockCsv: typeof import('@lendlock/contract') }).LendlockCsv;
        const started = performance.now();
        const result = await api.validateImeiCsv(file);
        const ms = performance.now() - started;
        return { ms, valid: result.valid.length, mb: file.size / 1e6 };
      }, rows);
    await run(); // warm the page's JIT once
    return await run();
  } finally {
    await browser.close();
  }
}

export async function consoleBenchmark(log: (line: string) => void): Promise<Figure[]> {
  log('6 Console: production build, initial JavaScript, CSV validation in Chromium');
  execFileSync('npm', ['run', 'build', '-w', '@lendlock/web'], { cwd: repoRoot, stdio: 'ignore' });
  const sizes = bundleSizes();
  log(
    `  login route: ${fmt.kb(sizes.login)} gzip (${sizes.loginFiles.length} files); signed-in shell: ${fmt.kb(sizes.shell)} gzip (${sizes.shellFiles} files)`,
  );
  const csv = await validateInBrowser(CSV_ROWS);
  if (csv.valid !== CSV_ROWS) throw new Error(`the validator passed ${csv.valid} rows of ${CSV_ROWS}`);
  log(`  ${fmt.int(CSV_ROWS)}-row CSV (${fmt.num(csv.mb)} MB) validated in ${fmt.s(csv.ms)}`);
  return [
    {
      bench: '6 Console',
      what: 'initial JavaScript of the login route (entry and its static imports)',
      value: `${fmt.kb(sizes.login)} gzip`,
      beside: `signed-in shell (adds the lazy layout chunk graph): ${fmt.kb(sizes.shell)} gzip`,
      target: '< 200 kB',
      holds: sizes.login < 200_000,
    },
    {
      bench: '6 Console',
      what: `validate a ${fmt.int(CSV_ROWS)}-row batch CSV in Chromium (contract validator, ${fmt.num(csv.mb)} MB File)`,
      value: fmt.s(csv.ms),
      target: '< 2 s',
      holds: csv.ms < 2000,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  consoleBenchmark(console.log).then(
    (figures) => {
      console.table(figures);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
