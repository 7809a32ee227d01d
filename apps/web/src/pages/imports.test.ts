/**
 * The console's import graph: a page imports from its own folder and from the shared layers
 * (components/, features/, api/, lib/, app/), never from another page's folder — what two pages share
 * lives in components/ or features/. The shared layers do not reach into pages/ either, except the
 * screen registry (features/screens/screenPages.tsx) that lazy-loads each page.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PAGES = join(SRC, 'pages');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx)$/.test(entry.name) ? [path] : [];
  });
}

/** The relative specifiers of a file's static imports, re-exports and dynamic imports. */
export function relativeImports(source: string): string[] {
  const found: string[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]+)['"]/gm;
  for (const match of source.matchAll(pattern)) found.push(match[1] as string);
  return found;
}

/** The page folder (e.g. `Reports`) a path lies in, or null outside pages/. */
function pageFolder(path: string): string | null {
  const rel = relative(PAGES, path);
  if (rel.startsWith('..')) return null;
  const [folder, ...rest] = rel.split(sep);
  return rest.length > 0 ? (folder ?? null) : null;
}

/** Every import that crosses from `file` into a page folder it does not belong to. */
function crossings(files: readonly string[]): string[] {
  return files.flatMap((file) => {
    const own = pageFolder(file);
    return relativeImports(readFileSync(file, 'utf8'))
      .map((specifier) => ({ specifier, target: pageFolder(resolve(dirname(file), specifier)) }))
      .filter(({ target }) => target !== null && target !== own)
      .map(({ specifier }) => `${relative(SRC, file)} imports ${specifier}`);
  });
}

describe('the import graph', () => {
  it('finds static, dynamic and side-effect imports', () => {
    const source = [
      "import { a } from '../Reports/columns';",
      "import type { B } from './b';",
      "import './style.css';",
      "const Page = lazy(() => import('../../pages/Users/UserManagementPage'));",
      "export { c } from '../c';",
      "import { d } from '@lendlock/contract';",
    ].join('\n');
    expect(relativeImports(source)).toEqual([
      '../Reports/columns',
      './b',
      './style.css',
      '../../pages/Users/UserManagementPage',
      '../c',
    ]);
  });

  it('has no page importing from another page’s folder', () => {
    expect(crossings(sourceFiles(PAGES))).toEqual([]);
  });

  it('has no shared component, feature, API call or helper importing a page (but the screen registry)', () => {
    const registry = join(SRC, 'features', 'screens', 'screenPages.tsx');
    const shared = ['components', 'features', 'api', 'lib']
      .flatMap((dir) => sourceFiles(join(SRC, dir)))
      .filter((file) => file !== registry);
    expect(crossings(shared)).toEqual([]);
  });
});
