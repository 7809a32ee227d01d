/**
 * The device loop converges (issue 25 point 11): a few seeded interleavings per stack of operator commands,
 * batches, collections runs, payments (and reversals, once the API has them), holds, failing devices,
 * re-enrolment, devices offline and online, broker restarts and server SIGKILLs (harness.ts), then the four
 * invariants after quiescence. The seed comes from CONVERGENCE_SEED (a failing run's seed replays it) or is
 * drawn, and is always printed; CONVERGENCE_RUNS runs per stack (default 2), the next seeds after the first;
 * CONVERGENCE_STEPS steps each (14); CONVERGENCE_STACKS=embedded,mosquitto to choose; CONVERGENCE_PLAN to
 * replay a shortened interleaving (`parsePlan`).
 * The long run is `npm run bench -- soak` (docs/reliability.md).
 *
 * KNOWN_UNTIL_MERGE: violations of faults the other branches of issue 25 fix. They are printed, never
 * silent; the lead empties the list once those branches are merged, and the test must then pass without it.
 */
import { randomInt } from 'node:crypto';
import { describe, expect, inject, it } from 'vitest';
import {
  explain,
  type Invariant,
  parsePlan,
  replayCommand,
  runConvergence,
  type Stack,
  type Violation,
} from './convergence/harness';
import { hasDynsec } from './private-mosquitto';

const KNOWN_UNTIL_MERGE: { invariant: Invariant; why: string }[] = [];

const SEED = process.env.CONVERGENCE_SEED ? Number(process.env.CONVERGENCE_SEED) : randomInt(1, 2 ** 31);
const RUNS = Number(process.env.CONVERGENCE_RUNS ?? 2);
const STEPS = Number(process.env.CONVERGENCE_STEPS ?? 14);
const DEVICES = 4;

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
        `convergence on ${stack}: seed ${seed} (replay: ${replayCommand({ seed, stack, steps: Array(STEPS) })})`,
      );
      const result = await runConvergence({
        stack,
        seed,
        steps: STEPS,
        devices: DEVICES,
        ...(process.env.CONVERGENCE_PLAN ? { plan: parsePlan(process.env.CONVERGENCE_PLAN) } : {}),
        templates: {
          pgliteDir: inject('pgliteTemplateDir'),
          postgresUrl: inject('postgresUrl') ?? undefined,
          postgresTemplate: inject('postgresTemplate') ?? undefined,
        },
        settleMs: 30_000,
        log: (line) => console.log(line),
      });
      const known = (v: Violation) => KNOWN_UNTIL_MERGE.find((k) => k.invariant === v.invariant);
      const tolerated = result.violations.filter(known);
      if (tolerated.length > 0)
        console.warn(
          `KNOWN_UNTIL_MERGE (${tolerated.map((v) => known(v)?.why).join('; ')}):\n${explain({ ...result, violations: tolerated })}`,
        );
      const unexpected = result.violations.filter((v) => !known(v));
      expect(unexpected, explain({ ...result, violations: unexpected })).toEqual([]);
    });
  }
});
