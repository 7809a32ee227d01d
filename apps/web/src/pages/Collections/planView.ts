/**
 * The pure side of a plan as the console shows it (the dry run and Today's Plan): the counts per action
 * and per reason not taken, whether anything will run at all, and an item's cells.
 */
import {
  COLLECTION_ACTIONS,
  COLLECTION_SKIPS,
  type CollectionAction,
  type CollectionSkip,
  type PlanItem,
  type PlanResponse,
} from '@lendlock/contract';
import type { TextColumn } from '../../components/columns';
import { failureText } from '../../features/collections/labels';
import { ACTION_LABELS, COLLECTIONS_LABELS as L, SKIP_LABELS } from './labels';

export interface CountRow<K extends string> {
  key: K;
  label: string;
  count: number;
}

/** Every action kind with its count, in the contract's order. */
export function actionCounts(counts: PlanResponse['counts']): CountRow<CollectionAction>[] {
  return COLLECTION_ACTIONS.map((key) => ({ key, label: ACTION_LABELS[key], count: counts[key] }));
}

/** The reasons some action was not taken, most first (reasons with none left out). */
export function skipCounts(counts: PlanResponse['counts']): CountRow<CollectionSkip>[] {
  return COLLECTION_SKIPS.map((key) => ({ key, label: SKIP_LABELS[key], count: counts.skipped[key] ?? 0 }))
    .filter((row) => row.count > 0)
    .sort((a, b) => b.count - a.count);
}

/** Actions that would be sent (every kind's count; skipped ones are counted apart). */
export function actionsToSend(counts: PlanResponse['counts']): number {
  return COLLECTION_ACTIONS.reduce((sum, key) => sum + counts[key], 0);
}

/**
 * Why nothing will run on the plan's day, or null when the policy acts: the kill switch first (it stops
 * everything, whatever the policy), then a policy that is off.
 */
export function haltText(plan: Pick<PlanResponse, 'killSwitch'>, policyEnabled: boolean): string | null {
  if (plan.killSwitch) return L.nothingRuns;
  if (!policyEnabled) return L.policyOff;
  return null;
}

export const PLAN_ITEM_COLUMNS: readonly TextColumn[] = [
  { title: L.imei, width: 160 },
  { title: L.action, width: 120 },
  { title: L.status, width: 190 },
  { title: L.customer, width: 170 },
  { title: L.loan, width: 130 },
  { title: L.dueDate, width: 110 },
  { title: L.amount, width: 120 },
  { title: L.daysOverdue, width: 110 },
  { title: L.rule, width: 320 },
];

/** Not taken (and why), failed on the device (retrying, or given up), done today, or still to send. */
export function itemStatus(item: Pick<PlanItem, 'skipped' | 'done' | 'failure'>): string {
  if (item.skipped) return SKIP_LABELS[item.skipped];
  if (item.failure) return failureText(item.failure);
  return item.done ? L.sent : L.toSend;
}

/** An item's cells under PLAN_ITEM_COLUMNS. */
export function planItemCells(item: PlanItem): string[] {
  return [
    item.imei,
    ACTION_LABELS[item.action],
    itemStatus(item),
    item.customerName,
    item.loanRef,
    item.dueDate ?? '',
    item.amount === null ? '' : `${item.amount} ${item.currency}`,
    String(item.daysOverdue),
    item.rule,
  ];
}
