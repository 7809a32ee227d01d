/**
 * No two modules import each other. The unit is a module (`modules/<name>/`) or a top-level part of the
 * server (`authz/`, `core/`, `db/`, `lib/`, `plugins/`, `openapi/`, or a file such as `app.ts`); an
 * import of any kind, a type's too, is an arrow from its file's unit to the target's. The graph of those
 * arrows has no cycle: a cycle names its units and the imports that close it. The one exception is the
 * application context's type, which is the composition root's (`core/context.ts` names it): the root
 * imports every module to build them, and any unit may name the type of what it built.
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importsOf } from './layers.test';
import { filesUnder, SRC } from './source-scan';

/** The unit a path under src/ (without `.ts`) belongs to. */
export function unitOf(path: string): string {
  const parts = path.split('/');
  if (parts[0] === 'modules' && parts.length > 2) return `modules/${parts[1]}`;
  return parts.length > 1 ? `${parts[0]}/` : path;
}

/** The composition root (`container.ts`): it imports every module to build them. */
const COMPOSITION_ROOT = 'container';

export interface Arrow {
  from: string;
  to: string;
  /** The file and the import that draw it. */
  via: string;
}

/** Every arrow between two units, from the import lines of a set of files (path under src/ → text). */
export function arrowsOf(files: ReadonlyMap<string, string>): Arrow[] {
  const arrows: Arrow[] = [];
  for (const [path, text] of files) {
    const from = unitOf(path.replace(/\.ts$/, ''));
    for (const entry of importsOf(`${SRC}/${path}`, text)) {
      if (!entry.local) continue;
      const to = unitOf(entry.target);
      // The application context is the composition root's type: every unit may name it.
      if (entry.typeOnly && to === COMPOSITION_ROOT) continue;
      if (to !== from) arrows.push({ from, to, via: `${path}: ${entry.text}` });
    }
  }
  return arrows;
}

/** The cycles of the graph: each strongly connected set of two or more units (Tarjan), sorted. */
export function cyclesOf(arrows: readonly Arrow[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of arrows) {
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)?.add(to);
    if (!next.has(to)) next.set(to, new Set());
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (unit: string) => {
    index.set(unit, counter);
    low.set(unit, counter);
    counter += 1;
    stack.push(unit);
    onStack.add(unit);
    for (const target of next.get(unit) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(unit, Math.min(low.get(unit) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) {
        low.set(unit, Math.min(low.get(unit) ?? 0, index.get(target) ?? 0));
      }
    }
    if (low.get(unit) === index.get(unit)) {
      const component: string[] = [];
      let member: string | undefined;
      do {
        member = stack.pop();
        if (member === undefined) break;
        onStack.delete(member);
        component.push(member);
      } while (member !== unit);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const unit of [...next.keys()].sort()) if (!index.has(unit)) visit(unit);
  return found.sort((a, b) => (a[0] ?? '').localeCompare(b[0] ?? ''));
}

/** A cycle with the imports inside it, for the failure message. */
function describeCycle(cycle: readonly string[], arrows: readonly Arrow[]): string {
  const members = new Set(cycle);
  const inside = arrows.filter((a) => members.has(a.from) && members.has(a.to));
  return [cycle.join(' ⇄ '), ...inside.map((a) => `  ${a.from} → ${a.to}  (${a.via})`)].join('\n');
}

function sources(): Map<string, string> {
  return new Map(filesUnder(SRC).map((file) => [relative(SRC, file), readFileSync(file, 'utf8')]));
}

describe('module graph', () => {
  it('has no cycle', () => {
    const arrows = arrowsOf(sources());
    // Each cycle with the imports that close it.
    expect(cyclesOf(arrows).map((cycle) => describeCycle(cycle, arrows))).toEqual([]);
  });

  it('finds a cycle through three modules and a type import (a test that can fail)', () => {
    const planted = new Map([
      ['modules/a/service.ts', "import { b } from '../b/service';\n"],
      ['modules/b/service.ts', "import { c } from '../c/repository';\n"],
      ['modules/c/repository.ts', "import type { A } from '../a/types';\n"],
      ['modules/d/service.ts', "import { a } from '../a/service';\n"],
      ['plugins/x.ts', "import { d } from '../modules/d/service';\n"],
    ]);
    expect(cyclesOf(arrowsOf(planted))).toEqual([['modules/a', 'modules/b', 'modules/c']]);
  });
});
