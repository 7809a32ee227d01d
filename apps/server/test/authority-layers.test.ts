/**
 * Who decides (docs/ARCHITECTURE.md § `apps/server/src`: routes declare, validate and call a service;
 * services hold the rules; repositories hold the queries): no route and no repository decides an object's authority on its own. Only
 * apps/server/src/authz/** and the services (asking authz) read the caller's tenant, compare a row's
 * tenant, or weigh levels and permissions. A pure scan of the source: no database.
 */
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { code, filesUnder, SRC } from './source-scan';

const MODULES = join(SRC, 'modules');

/** A decision taken outside authz/: each pattern with why it is one. */
const DECISIONS: readonly { pattern: RegExp; why: string }[] = [
  {
    // Reading the caller's tenant: whoever reads it decides what the caller sees (a scope, a refusal).
    // A repository's own `scope.retailerPhone` or `retailerPhone` parameter is data it was given: not matched.
    pattern: /\b(?:principal|actor|requirePrincipal\([^()]*\))\??\.retailerPhone\b/,
    why: "reads the caller's tenant (authz's scopeFor/may decide with it)",
  },
  {
    // Comparing a row's tenant in code, not in SQL (`WHERE retailer_phone = $1` applies a scope; `===` decides).
    // (`body.retailer_phone ?? null` passes a request's field on: not a decision.)
    pattern: /\bretailer_phone\s*(?:===|!==)|(?:===|!==)\s*[\w.?]*\bretailer_phone\b/,
    why: "compares a row's tenant (authz/tenancy.ts `sees` decides)",
  },
  {
    // Weighing a level: USER < ADMIN < SUPERADMIN is authz/authority.ts's and the policies'.
    pattern: /\buserlevel\s*(?:===|!==)|(?:===|!==)\s*[\w.?]*\buserlevel\b/,
    why: 'compares a level (authz/authority.ts and the policies decide)',
  },
  {
    // The level and permission rules themselves: only authz/ and the services asking it call them.
    pattern:
      /\b(?:canManage|levelsGivenBy|passesEveryPermission|hasPermission|mayUse\w*|mayCancel\w*|mayControl\w*)\b/,
    why: 'applies a level or permission rule (authz decides)',
  },
];

describe('authority lives in authz/ and the services', () => {
  const layers = filesUnder(MODULES).filter((file) => /(?:^|\/)(?:routes|repository)\.ts$/.test(file));

  it('finds the routes and repositories it checks', () => {
    expect(layers.length).toBeGreaterThan(15);
  });

  it('no routes.ts or repository.ts decides an object’s authority', () => {
    const found: string[] = [];
    for (const file of layers) {
      const lines = code(readFileSync(file, 'utf8')).split('\n');
      lines.forEach((line, index) => {
        for (const { pattern, why } of DECISIONS)
          if (pattern.test(line)) found.push(`${relative(SRC, file)}:${index + 1}: ${why}: ${line.trim()}`);
      });
    }
    expect(found).toEqual([]);
  });

  /** Modules that take a Principal only to hand it to a service that decides, each with why. */
  const PASSES_ON: Record<string, string> = {
    'loans/demo.ts': 'seeds the demo loans through LoanService (which decides), as the given actor',
    'sessions/reauth.ts': "checks the caller's own password for keys/service.ts, which decides the act",
    'collections/failures/service.ts':
      'reads a device only through collections/access.ts (`readableDevice`), which asks authz',
  };

  it('every service that takes a Principal asks authz/', () => {
    // A module file other than its routes and repository that exports something and takes the caller's
    // Principal as a parameter is a service: it decides, so it must ask the authority module.
    const services = filesUnder(MODULES).filter((file) => !/(?:^|\/)(?:routes|repository)\.ts$/.test(file));
    const silent = services.filter((file) => {
      if (relative(MODULES, file) in PASSES_ON) return false;
      const text = code(readFileSync(file, 'utf8'));
      // A parameter typed Principal (`actor: Principal`, `principal: Principal`) in a module that exports.
      const takesPrincipal = /\b\w+\??:\s*Principal\b/.test(text) && /^export /m.test(text);
      const asksAuthz = /from '(?:\.\.\/)+authz(?:\/[\w/]+)?'/.test(text);
      return takesPrincipal && !asksAuthz;
    });
    expect(silent.map((file) => relative(SRC, file))).toEqual([]);
  });

  it('the patterns catch what they are for, and not a scope given as data', () => {
    const matches = (line: string) => DECISIONS.filter(({ pattern }) => pattern.test(code(line))).length;
    for (const line of [
      'if (principal.retailerPhone) throw forbidden(x);',
      'scope: requirePrincipal(request).retailerPhone,',
      "if (device.retailer_phone !== actor.retailerPhone) throw notFound('x');",
      "return row.userlevel === 'ADMIN';",
      'if (!hasPermission(principal, screen)) throw forbidden(x);',
      'mayControlBatchOf(p, owner)',
    ])
      expect(matches(line), line).toBeGreaterThan(0);
    for (const line of [
      "if (scope.retailerPhone !== null) q = q.where('d.retailer_phone', '=', scope.retailerPhone);",
      'export async function listHolds(db: Db, retailerPhone: string | null) {',
      "q.where('retailer_phone', '=', retailerPhone)",
      '// the owner or a higher level (mayControlBatchOf)',
      "const url = 'https://example.com/x';",
    ])
      expect(matches(line), line).toBe(0);
  });
});
