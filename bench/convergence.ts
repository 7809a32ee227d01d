/**
 * The long convergence run, part of `npm run bench -- soak`: CONVERGENCE_RUNS (200)
 * seeded interleavings of CONVERGENCE_STEPS (12) steps over 4 devices, alternating the embedded stack
 * (PGlite, embedded broker) and PostgreSQL with a private Mosquitto under dynamic security, each checked
 * after quiescence (apps/server/test/convergence/harness.ts). Seeds run from CONVERGENCE_SEED (random when
 * unset) upwards; every violating seed is printed with its steps and rows, and the command that replays it
 * in the test (`replayCommand`: its seed, steps and stack).
 * CONVERGENCE_JOBS (4) runs that many at once; CONVERGENCE_SETTLE_SECONDS (20) bounds each run's settling.
 * The figures (runs, steps, faults injected by kind, violations by invariant, time) replace the section
 * between the markers in docs/reliability.md (and, after every interleaving, the figures so far go to
 * $TMPDIR/lendlock-convergence-figures.md).
 *
 *   node --import tsx bench/convergence.ts
 */
import { randomInt } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  abandonRuns,
  explain,
  prepareTemplates,
  type RunResult,
  runConvergence,
  type Stack,
  type StepKind,
} from '../apps/server/test/convergence/harness';
import { ADMIN_URL } from './lib/db';
import { type Figure, fmt } from './lib/report';
import { onInterrupt, repoRoot } from './lib/server';

const RUNS = Number(process.env.CONVERGENCE_RUNS ?? 200);
const STEPS = Number(process.env.CONVERGENCE_STEPS ?? 12);
const DEVICES = 4;
/** Interleavings run at once (each its own server, broker and fleet). */
const JOBS = Number(process.env.CONVERGENCE_JOBS ?? 4);
/** How long a run may take to settle after its last step. */
const SETTLE_MS = Number(process.env.CONVERGENCE_SETTLE_SECONDS ?? 20) * 1000;
/** The figures so far, rewritten after every interleaving. */
const PROGRESS = join(tmpdir(), 'lendlock-convergence-figures.md');
const START = '<!-- convergence-soak:start -->';
const END = '<!-- convergence-soak:end -->';

/** The faults among the steps (the rest are the fleet's ordinary life). */
const FAULTS: readonly StepKind[] = [
  'failing',
  'reenrol',
  'offline',
  'brokerRestart',
  'serverKill',
  'runKilled',
  'reverse',
];

export async function convergenceSoak(log: (line: string) => void): Promise<Figure[]> {
  const first = process.env.CONVERGENCE_SEED ? Number(process.env.CONVERGENCE_SEED) : randomInt(1, 2 ** 30);
  log(`Convergence: ${RUNS} interleavings of ${STEPS} steps from seed ${first}`);
  const templates = await prepareTemplates(ADMIN_URL);
  const forget = onInterrupt(async () => {
    await abandonRuns();
    await templates.drop();
  });
  const results: RunResult[] = [];
  const started = Date.now();
  let next = 0;
  const errors: string[] = [];
  const worker = async () => {
    for (let i = next++; i < RUNS; i = next++) {
      const stack: Stack = i % 2 === 0 ? 'embedded' : 'mosquitto';
      const seed = first + i;
      let result: RunResult;
      try {
        result = await runConvergence({
          stack,
          seed,
          steps: STEPS,
          devices: DEVICES,
          templates,
          settleMs: SETTLE_MS,
        });
      } catch (error) {
        // The harness itself failed (a set-up refused, a server that would not start): counted, not hidden.
        errors.push(`${stack} seed ${seed}: ${error instanceof Error ? error.message : String(error)}`);
        log(`  ${i + 1}/${RUNS} ${stack} seed ${seed}: harness error: ${errors.at(-1)}`);
        continue;
      }
      results.push(result);
      const mark = `${result.violations.length === 0 ? 'ok' : `${result.violations.length} violation(s)`}${result.quiescent ? '' : ', not quiescent'}`;
      const slowest = result.steps
        .map((step, k) => ({ step: step.kind, ms: result.timings.stepMs[k] ?? 0 }))
        .sort((x, y) => y.ms - x.ms)
        .slice(0, 3)
        .map((x) => `${x.step} ${fmt.s(x.ms)}`)
        .join(', ');
      log(
        `  ${i + 1}/${RUNS} ${stack} seed ${seed}: ${mark} (${fmt.s(result.ms)}: set-up ${fmt.s(result.timings.setupMs)}, settling ${fmt.s(result.timings.settleMs)}; slowest ${slowest})`,
      );
      if (result.violations.length > 0) log(explain(result).replace(/^/gm, '    '));
      // The figures so far, should the run be cut short.
      writeFileSync(PROGRESS, figures(results, errors, first, (Date.now() - started) / 60_000).section);
    }
  };
  try {
    await Promise.all(Array.from({ length: JOBS }, worker));
  } finally {
    forget();
    await templates.drop();
  }
  const minutes = (Date.now() - started) / 60_000;
  const { section, failing, faults } = figures(results, errors, first, minutes);
  const path = resolve(repoRoot, 'docs/reliability.md');
  const doc = readFileSync(path, 'utf8');
  if (doc.includes(START) && doc.includes(END)) {
    writeFileSync(path, doc.replace(new RegExp(`${START}[\\s\\S]*${END}`), section));
    log(`  figures written to ${path}`);
  } else log(section);
  return [
    {
      bench: 'Convergence',
      what: `${RUNS} seeded interleavings × ${STEPS} steps, both stacks`,
      value: `${failing.length} runs violating`,
      beside: `${fmt.int(faults)} faults, ${fmt.num(minutes)} min`,
      target: '0 violations',
      holds: failing.length === 0,
    },
  ];
}

/** The figures of the runs so far, as the section of docs/reliability.md. */
function figures(results: readonly RunResult[], errors: readonly string[], first: number, minutes: number) {
  const faults = new Map<string, number>();
  const kinds = new Map<string, number>();
  for (const r of results)
    for (const step of r.steps) {
      const kind = step.kind === 'brokerRestart' ? `brokerRestart ${step.signal}` : step.kind;
      if (FAULTS.includes(step.kind)) faults.set(kind, (faults.get(kind) ?? 0) + 1);
      else kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
    }
  const byInvariant = new Map<string, Set<number>>();
  for (const r of results)
    for (const v of r.violations)
      byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? new Set()).add(r.seed));
  const failing = results.filter((r) => r.violations.length > 0);
  const steps = results.reduce((sum, r) => sum + r.steps.length, 0);
  const activity = new Map<string, number>();
  for (const r of results)
    for (const [k, n] of Object.entries(r.activity)) activity.set(k, (activity.get(k) ?? 0) + n);
  const list = (m: Map<string, number>) =>
    [...m]
      .sort((a, b) => a[0].localeCompare(b[0]))
      .map(([k, n]) => `${k} ${fmt.int(n)}`)
      .join(', ');
  const section = [
    START,
    `Last long run: ${new Date().toISOString().slice(0, 10)}, seeds ${first}–${first + RUNS - 1}, ${results.length + errors.length === RUNS ? fmt.int(RUNS) : `${fmt.int(results.length + errors.length)} of ${fmt.int(RUNS)} (in progress)`} interleavings (${results.filter((r) => r.stack === 'embedded').length} embedded, ${results.filter((r) => r.stack === 'mosquitto').length} PostgreSQL + Mosquitto) of ${STEPS} steps over ${DEVICES} devices, ${fmt.num(minutes)} min.`,
    '',
    `- steps: ${fmt.int(steps)} (${list(kinds)})`,
    `- faults injected: ${fmt.int([...faults.values()].reduce((a, b) => a + b, 0))} (${list(faults)})`,
    `- what the fleet did: ${list(activity)}`,
    `- runs not quiescent in ${SETTLE_MS / 1000} s: ${results.filter((r) => !r.quiescent).length}`,
    `- runs with a violation: ${failing.length}`,
    `- runs the harness could not finish: ${errors.length}${errors.length > 0 ? ` (${errors.slice(0, 3).join('; ')})` : ''}`,
    ...['state', 'current', 'pending', 'once'].map((inv) => {
      const named = [...new Set(results.flatMap((r) => r.violations.map((v) => v.cause)))].filter(Boolean);
      const causes = [...named, undefined].map((cause) => {
        const seeds = results
          .filter((r) => r.violations.some((v) => v.invariant === inv && v.cause === cause))
          .map((r) => r.seed);
        return seeds.length === 0
          ? ''
          : `${cause ?? 'no known cause'}: ${seeds.length} (seeds ${seeds.slice(0, 6).join(', ')}${seeds.length > 6 ? ', …' : ''})`;
      });
      return `- \`${inv}\` violated: ${byInvariant.get(inv)?.size ?? 0} runs${causes.some(Boolean) ? `; ${causes.filter(Boolean).join('; ')}` : ''}`;
    }),
    END,
  ].join('\n');
  return { section, failing, faults: [...faults.values()].reduce((a, b) => a + b, 0) };
}

if (resolve(process.argv[1] ?? '') === fileURLToPath(import.meta.url)) {
  convergenceSoak((line) => console.log(line)).then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
      process.exit(1);
    },
  );
}
