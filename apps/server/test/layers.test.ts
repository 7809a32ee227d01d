/**
 * The layers the build checks (docs/ARCHITECTURE.md § `apps/server/src`): routes declare, validate and
 * call services; services hold the rules and transactions; repositories hold SQL. A plain scan of the
 * import lines of apps/server/src (no database, no bundler): each rule names the files it binds and what
 * they may or may not import, and a break names the file, the import and the rule.
 *
 * The rules:
 * - `modules/<m>/routes.ts` imports no repository (any module's) and nothing from `db/` but types and
 *   `db/priority.ts` (the priority a call runs at is declared with it); it does not touch the database
 *   (`ctx.db`, `ctx.database`): every query goes through a service.
 * - `modules/<m>/repository.ts` imports only node built-ins, `kysely`, `@lendlock/contract`, `db/`,
 *   `lib/` (pure helpers), `core/` (Principal, AppError), other repositories, and types only from
 *   `authz/tenancy.ts` and `authz/resources/` (a scope handed to it as data). No service, route, plugin,
 *   mapper, formatter or anything else.
 * - `plugins/*` import no module's repository (a plugin asks a service).
 * - `core/` (Principal, AppError, the application context) imports values only from `core/` and packages,
 *   and types from anywhere: both plugins and modules import it, and it imports neither at run time.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { code, filesUnder, SRC } from './source-scan';

export interface Import {
  /** Where it points: a path under src/ without `.ts` (`modules/audit/repository`), or a package name. */
  target: string;
  /** `import type …` or every name in braces marked `type`. */
  typeOnly: boolean;
  /** A file of the app (a relative import), not a package. */
  local: boolean;
  /** The statement as written, for the message. */
  text: string;
}

/** Every `import … from '…'`, `export … from '…'` and `import('…')` of a file, resolved under src/. */
export function importsOf(file: string, text: string): Import[] {
  const found: Import[] = [];
  const statement = /(?:^|\n)\s*(import|export)\s+(type\s+)?([\s\S]*?)\s*from\s*'([^']+)'/g;
  const dynamic = /\bimport\(\s*'([^']+)'\s*\)/g;
  const body = code(text);
  const resolveTarget = (specifier: string) =>
    specifier.startsWith('.')
      ? relative(SRC, resolve(dirname(file), specifier)).replace(/\.(ts|js)$/, '')
      : specifier;
  for (const match of body.matchAll(statement)) {
    const [, , typeKeyword, names = '', specifier = ''] = match;
    const braces = /^\{([\s\S]*)\}$/.exec(names.trim());
    const inBraces = (braces?.[1] ?? '')
      .split(',')
      .map((name) => name.trim())
      .filter(Boolean);
    const allTyped = inBraces.length > 0 && inBraces.every((name) => name.startsWith('type '));
    found.push({
      target: resolveTarget(specifier),
      local: specifier.startsWith('.'),
      typeOnly: Boolean(typeKeyword) || allTyped,
      text: match[0].trim().replace(/\s+/g, ' '),
    });
  }
  for (const match of body.matchAll(dynamic)) {
    const specifier = match[1] ?? '';
    found.push({
      target: resolveTarget(specifier),
      local: specifier.startsWith('.'),
      typeOnly: false,
      text: match[0],
    });
  }
  return found;
}

const isRepository = (target: string) => /(^|\/)repository$/.test(target);

export interface Violation {
  file: string;
  rule: string;
  detail: string;
}

/** The layering rules over a set of files (path under src/ → its text). */
export function layerViolations(files: ReadonlyMap<string, string>): Violation[] {
  const violations: Violation[] = [];
  for (const [path, text] of files) {
    const absolute = join(SRC, path);
    const imports = importsOf(absolute, text);
    const add = (rule: string, detail: string) => violations.push({ file: path, rule, detail });
    if (/^modules\/[^/]+\/routes\.ts$/.test(path)) {
      for (const entry of imports) {
        if (entry.local && isRepository(entry.target)) add('a route imports no repository', entry.text);
        if (entry.target.startsWith('db/') && entry.target !== 'db/priority' && !entry.typeOnly)
          add('a route imports only types from db/ (and db/priority)', entry.text);
      }
      for (const line of code(text).split('\n')) {
        if (/\bctx\.(db|database)\b/.test(line)) add('a route does not touch the database', line.trim());
      }
    }
    // A module's repository.ts, or one of an aggregate's folder inside it (modules/collections/plan/).
    if (/(^|\/)repository\.ts$/.test(path)) {
      for (const entry of imports) {
        const t = entry.target;
        const allowed =
          (!entry.local && (t.startsWith('node:') || t === 'kysely' || t === '@lendlock/contract')) ||
          t.startsWith('db/') ||
          t.startsWith('lib/') ||
          t.startsWith('core/') ||
          isRepository(t) ||
          (entry.typeOnly && (t === 'authz/tenancy' || t.startsWith('authz/resources/')));
        if (!allowed)
          add('a repository imports only db/, lib/, core/, the contract and repositories', entry.text);
      }
    }
    if (/^plugins\//.test(path)) {
      for (const entry of imports) {
        if (entry.target.startsWith('modules/') && isRepository(entry.target)) {
          add("a plugin imports no module's repository", entry.text);
        }
      }
    }
    if (/^core\//.test(path)) {
      for (const entry of imports) {
        const t = entry.target;
        if (!entry.local) continue;
        const allowed = t.startsWith('core/') || entry.typeOnly;
        if (!allowed) add('core/ imports values only from core/', entry.text);
      }
    }
  }
  return violations;
}

function sources(): Map<string, string> {
  return new Map(filesUnder(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')]));
}

describe('layers', () => {
  it('every file of apps/server/src keeps its layer', () => {
    const found = layerViolations(sources()).map((v) => `${v.file}: ${v.rule}: ${v.detail}`);
    expect(found).toEqual([]);
  });

  it('the scan sees the imports it rules on (a test that can fail)', () => {
    const planted = new Map([
      [
        'modules/x/routes.ts',
        "import { findX } from './repository';\nimport { sql } from '../../db/raw';\nctx.db;\n",
      ],
      [
        'modules/x/repository.ts',
        "import { XService } from './service';\nimport type { TenantScope } from '../../authz/tenancy';\n",
      ],
      [
        'modules/y/repository.ts',
        "import { scopeFor } from '../../authz/tenancy';\nimport { cells } from '../reports/export';\n",
      ],
      ['plugins/p.ts', "import {\n  findX,\n} from '../modules/x/repository';\n"],
      [
        'core/c.ts',
        "import { requirePrincipal } from '../plugins/auth';\nimport type { DB } from '../db/types';\n",
      ],
      ['modules/x/service.ts', "import { findX } from './repository';\n"],
      // An aggregate's own folder inside a module: the same rules.
      [
        'modules/z/part/repository.ts',
        "import { findX } from '../../x/repository';\nimport { PartService } from './service';\n",
      ],
      ['plugins/q.ts', "import { findPart } from '../modules/z/part/repository';\n"],
    ]);
    const found = layerViolations(planted).map((v) => `${v.file}: ${v.detail}`);
    expect(found).toEqual([
      "modules/x/routes.ts: import { findX } from './repository'",
      "modules/x/routes.ts: import { sql } from '../../db/raw'",
      'modules/x/routes.ts: ctx.db;',
      "modules/x/repository.ts: import { XService } from './service'",
      "modules/y/repository.ts: import { scopeFor } from '../../authz/tenancy'",
      "modules/y/repository.ts: import { cells } from '../reports/export'",
      "plugins/p.ts: import { findX, } from '../modules/x/repository'",
      "core/c.ts: import { requirePrincipal } from '../plugins/auth'",
      "modules/z/part/repository.ts: import { PartService } from './service'",
      "plugins/q.ts: import { findPart } from '../modules/z/part/repository'",
    ]);
  });
});
