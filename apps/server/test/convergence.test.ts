/**
 * The device loop converges: a few seeded interleavings per stack of operator commands,
 * batches, collections runs, payments and their reversals, holds, failing devices,
 * re-enrolment, devices offline and online, broker restarts and server SIGKILLs (harness.ts), then the four
 * invariants after quiescence. The seed comes from CONVERGENCE_SEED (a failing run's seed replays it) or is
 * drawn, and is always printed; CONVERGENCE_RUNS runs per stack (default 2), the next seeds after the first;
 * CONVERGENCE_STEPS steps each (14); CONVERGENCE_STACKS=embedded,mosquitto to choose; CONVERGENCE_PLAN to
 * replay a shortened interleaving (`parsePlan`).
 * The long run is `npm run bench -- soak` (docs/reliability.md).
 */
import { randomInt } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import {
  describeStep,
  explain,
  parsePlan,
  planRun,
  replayCommand,
  runConvergence,
  type Stack,
} from './convergence/harness';
import { hasDynsec } from './private-mosquitto';

const SEED = process.env.CONVERGENCE_SEED ? Number(process.env.CONVERGENCE_SEED) : randomInt(1, 2 ** 31);
const RUNS = Number(process.env.CONVERGENCE_RUNS ?? 2);
const STEPS = Number(process.env.CONVERGENCE_STEPS ?? 14);
const DEVICES = 4;
const PLAN = process.env.CONVERGENCE_PLAN ? parsePlan(process.env.CONVERGENCE_PLAN) : undefined;

const stacks: Stack[] = (
  ['embedded', ...(inject('postgresUrl') && hasDynsec ? (['mosquitto'] as const) : [])] as Stack[]
).filter(
  (stack) => !process.env.CONVERGENCE_STACKS || process.env.CONVERGENCE_STACKS.split(',').includes(stack),
);

describe.each(stacks)('the device loop converges on %s', (stack) => {
  for (let run = 0; run < RUNS; run++) {
    const seed = SEED + run;
    it(`seed ${seed}`, { timeout: 240_000 }, async () => {
      console.log(
        `convergence on ${stack}: seed ${seed} (replay: ${replayCommand({ seed, stack, steps: PLAN ?? Array(STEPS), planned: PLAN !== undefined })})`,
      );
      const result = await runConvergence({
        stack,
        seed,
        steps: STEPS,
        devices: DEVICES,
        ...(PLAN ? { plan: PLAN } : {}),
        templates: {
          pgliteDir: inject('pgliteTemplateDir'),
          postgresUrl: inject('postgresUrl') ?? undefined,
          postgresTemplate: inject('postgresTemplate') ?? undefined,
        },
        settleMs: 30_000,
        log: (line) => console.log(line),
      });
      expect(result.violations, explain(result)).toEqual([]);
    });
  }
});

describe('the interleavings', () => {
  it('a seed draws the same steps every time, and their description replays them', () => {
    for (const seed of [1, 42, SEED]) {
      const steps = planRun(seed, 40, DEVICES);
      expect(planRun(seed, 40, DEVICES)).toEqual(steps);
      expect(parsePlan(steps.map(describeStep).join(', '))).toEqual(steps);
    }
    // Every kind is drawn over a few seeds.
    const kinds = new Set([1, 2, 3, 4, 5].flatMap((seed) => planRun(seed, 40, DEVICES).map((s) => s.kind)));
    expect(kinds.size).toBe(15);
  });
});
