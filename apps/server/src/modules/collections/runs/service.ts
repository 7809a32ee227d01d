/** The daily runs as the API shows them (the lender's users): the last 30, newest first. */
import { COLLECTIONS_MESSAGES, type CollectionsRun } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize } from '../../../authz';
import { forbidden } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import type { DB } from '../../../db/types';
import { iso } from '../access';
import { countsOfRun } from '../engine';
import { recentRuns } from './repository';

export class RunService {
  constructor(private readonly options: { db: Kysely<DB> }) {}

  private get db() {
    return this.options.db;
  }

  async recent(actor: Principal): Promise<CollectionsRun[]> {
    authorize(actor, 'collections', 'view', 'run', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    return (await recentRuns(this.db, 30)).map((run) => ({
      id: run.id,
      runDate: run.run_date,
      version: run.version,
      state: run.state,
      startedAt: new Date(run.started_at).toISOString(),
      finishedAt: iso(run.finished_at),
      processed: run.processed,
      counts: countsOfRun(run.counts),
      resumes: run.resumes,
    }));
  }
}
