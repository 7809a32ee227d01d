/**
 * Collections on autopilot, the API's side (docs/features.md § Collections on autopilot): one service per
 * aggregate, each holding its rules, asking the authority module (authz/resources/collections.ts: only the
 * lender steers the policy, the kill switch and the runs, which govern every tenant; a hold, a release or a
 * device's failures of another tenant is not found) and auditing every change. The routes call them.
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import type { CommandService } from '../commands/service';
import type { EventSink } from '../webhooks/events';
import { FailureService } from './failures/service';
import { HoldService } from './holds/service';
import { KillSwitchService } from './killswitch/service';
import { PlanService } from './plan/service';
import { PolicyService } from './policy/service';
import { ReleaseService } from './releases/service';
import { RunService } from './runs/service';

export interface CollectionsServicesOptions {
  db: Kysely<DB>;
  commands: CommandService;
  events: EventSink;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
  /** The engine's clock: "today" of the plan. */
  now: () => Date;
}

/** The services of collections, each constructed with what it depends on. */
export function collectionsServices(options: CollectionsServicesOptions) {
  const { db, commands, events, now } = options;
  return {
    policy: new PolicyService({ db }),
    plan: new PlanService({ db, now }),
    killSwitch: new KillSwitchService({ db, events }),
    holds: new HoldService({ db }),
    releases: new ReleaseService({
      db,
      commands,
      ...(options.oneShotTtlMs !== undefined ? { oneShotTtlMs: options.oneShotTtlMs } : {}),
    }),
    failures: new FailureService({ db }),
    runs: new RunService({ db }),
  };
}
