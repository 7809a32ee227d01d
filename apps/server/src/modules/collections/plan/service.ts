/**
 * The plan as the API shows it (docs/features.md § Collections on autopilot): what the policy (the saved one,
 * or an unsaved one: the dry run) does on a day, counted and paged, and the whole of it as CSV; the caller's
 * tenant's loans only. The one plan is `planRows` (repository.ts), which the daily run reads too.
 */
import { Readable } from 'node:stream';
import {
  COLLECTIONS_MESSAGES,
  COLLECTIONS_RETRY,
  type CollectionAction,
  type CollectionsPolicy,
  CSV_BOM,
  emptyPlanCounts,
  formatAmount,
  lenderClock,
  type PlanCounts,
  type PlanItem,
  type PlanResponse,
  planCsvText,
  ruleText,
  runStartTime,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { scopeFor } from '../../../authz';
import { badRequest } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { inTransaction } from '../../../db/transaction';
import type { DB } from '../../../db/types';
import { readControl } from '../killswitch/repository';
import { policyInForce } from '../policy/service';
import { type PlanParams, type PlanRow, planCounts, planRows } from './repository';

/** A plan row as the API shows it. */
export function toPlanItem(row: PlanRow, version: number | null, policy: CollectionsPolicy): PlanItem {
  return {
    loanId: Number(row.loan_id),
    loanRef: row.loan_ref,
    imei: row.imei,
    customerName: row.customer_name,
    retailerPhone: row.retailer_phone,
    action: row.kind,
    skipped: row.skipped,
    rule: ruleText(version, row.kind, policy),
    dueDate: row.due_date,
    amount: row.amount_minor === null ? null : formatAmount(Number(row.amount_minor), row.currency),
    currency: row.currency,
    daysOverdue: Number(row.days_overdue),
    done: row.done,
    failure:
      row.done_state === 'RETRYING' || row.done_state === 'FAILED'
        ? { state: row.done_state, attempts: Number(row.attempts ?? 1), of: COLLECTIONS_RETRY.maxAttempts }
        : null,
  };
}

/** Counts of plan items: taken per action, skipped per reason. */
export function countsOf(
  rows: readonly { kind: CollectionAction; skipped: string | null; n?: number }[],
): PlanCounts {
  const counts = emptyPlanCounts();
  for (const row of rows) {
    const n = row.n ?? 1;
    if (row.skipped === null) counts[row.kind] += n;
    else if (row.skipped in counts.skipped) counts.skipped[row.skipped as keyof PlanCounts['skipped']] += n;
  }
  return counts;
}

/** A page's cursor: `{loanId}.{group}` of the last item. */
function parseCursor(cursor: string | undefined): { loanId: number; ord: number } | undefined {
  if (cursor === undefined) return undefined;
  const match = /^(\d{1,15})\.([1-4])$/.exec(cursor);
  if (!match) throw badRequest(COLLECTIONS_MESSAGES.badCursor);
  return { loanId: Number(match[1]), ord: Number(match[2]) };
}

/** Rows per read of the plan's CSV. */
const EXPORT_PAGE = 5_000;

export interface PlanServiceOptions {
  db: Kysely<DB>;
  /** The engine's clock: "today" of the plan. */
  now: () => Date;
}

export class PlanService {
  constructor(private readonly options: PlanServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  private async planParams(
    actor: Principal,
    request: { date?: string | undefined; policy?: CollectionsPolicy | undefined },
  ): Promise<{ params: Omit<PlanParams, 'range'>; version: number | null }> {
    const current = await policyInForce(this.db);
    const policy = request.policy ?? current.policy;
    const control = await readControl(this.db);
    return {
      version: request.policy ? null : current.version,
      params: {
        date: request.date ?? lenderClock(policy.timeZone, this.options.now()).date,
        now: this.options.now(),
        policy,
        killSwitch: control.kill_switch,
        // The plan (and a dry run of another policy) shows the caller's tenant's loans only.
        retailerPhone: scopeFor(actor, 'collections').retailerPhone,
      },
    };
  }

  /** What the policy (saved, or `policy`) does on a day: counts (first page only) and a page of items. */
  async read(
    actor: Principal,
    request: {
      date?: string | undefined;
      policy?: CollectionsPolicy | undefined;
      filter: PlanParams['filter'];
      limit: number;
      cursor?: string | undefined;
    },
  ): Promise<Omit<PlanResponse, 'status'>> {
    const after = parseCursor(request.cursor);
    const { params, version } = await this.planParams(actor, request);
    // In a transaction: the plan's statements run without JIT compilation (repository.ts).
    const { rows, counted } = await inTransaction(this.db, async (trx) => ({
      rows: await planRows(trx, {
        ...params,
        filter: request.filter,
        range: { kind: 'all', ...(after ? { after } : {}) },
        limit: request.limit + 1,
      }),
      counted: await planCounts(trx, { ...params, range: { kind: 'all' } }),
    }));
    const page = rows.slice(0, request.limit);
    const last = page.at(-1);
    const counts = countsOf(counted);
    return {
      date: params.date,
      timeZone: params.policy.timeZone,
      version,
      killSwitch: params.killSwitch,
      runsAt: runStartTime(params.policy),
      counts,
      items: page.map((row) => toPlanItem(row, version, params.policy)),
      cursor: rows.length > request.limit && last ? `${last.loan_id}.${last.ord}` : null,
    };
  }

  /** The whole plan as CSV (UTF-8 with the BOM), read page by page as the client takes it. */
  async csv(
    actor: Principal,
    request: {
      date?: string | undefined;
      policy?: CollectionsPolicy | undefined;
      filter: PlanParams['filter'];
    },
  ): Promise<{ date: string; stream: Readable }> {
    const { params, version } = await this.planParams(actor, request);
    const db = this.db;
    async function* lines(): AsyncGenerator<string> {
      yield `${CSV_BOM}${await planCsvText([], { header: true })}`;
      let after: { loanId: number; ord: number } | undefined;
      for (;;) {
        const page = after;
        const rows = await inTransaction(db, (trx) =>
          planRows(trx, {
            ...params,
            filter: request.filter,
            range: { kind: 'all', ...(page ? { after: page } : {}) },
            limit: EXPORT_PAGE,
          }),
        );
        if (rows.length === 0) return;
        const items: PlanItem[] = rows.map((row) => toPlanItem(row, version, params.policy));
        yield `\r\n${await planCsvText(items, { header: false })}`;
        if (rows.length < EXPORT_PAGE) return;
        const last = rows.at(-1) as (typeof rows)[number];
        after = { loanId: Number(last.loan_id), ord: last.ord };
      }
    }
    return { date: params.date, stream: Readable.from(lines(), { objectMode: false }) };
  }
}
