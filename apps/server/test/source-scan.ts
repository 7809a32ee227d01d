/** Reading the server's own source, for the tests that check its structure (layers, authority). */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SRC = join(import.meta.dirname, '../src');

/** Every source file under `dir` (tests left out). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? filesUnder(join(dir, entry.name))
      : entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')
        ? [join(dir, entry.name)]
        : [],
  );
}

/**
 * The code of a file without its comments (a comment may name a rule or quote an import it does not
 * apply). Line comments start at the line or after a blank, so a URL's `//` inside a string stays.
 */
export function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, (comment) => comment.replace(/[^\n]/g, ' '))
    .replace(/(^|\s)\/\/.*$/gm, '$1');
}
