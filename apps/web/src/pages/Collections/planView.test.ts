/** A plan as the console reads it: counts in the contract's order, reasons not taken, why nothing runs, an item's cells. */
import { emptyPlanCounts, type PlanItem } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ACTION_LABELS, COLLECTIONS_LABELS as L, SKIP_LABELS } from './labels';
import {
  actionCounts,
  actionsToSend,
  haltText,
  itemStatus,
  PLAN_ITEM_COLUMNS,
  planItemCells,
  skipCounts,
} from './planView';

const counts = () => {
  const c = emptyPlanCounts();
  c.PRE = 4;
  c.LOCK = 2;
  c.skipped.held = 1;
  c.skipped.recentPayment = 3;
  return c;
};

const item = (overrides: Partial<PlanItem> = {}): PlanItem => ({
  loanId: 7,
  loanRef: 'LN-7',
  imei: '356938035643809',
  customerName: 'Asha Rao',
  retailerPhone: null,
  action: 'LOCK',
  skipped: null,
  rule: 'collections v2: lock after 5 days overdue',
  dueDate: '2030-01-01',
  amount: '1499.50',
  currency: 'INR',
  daysOverdue: 6,
  done: false,
  failure: null,
  ...overrides,
});

describe('plan view', () => {
  it('lists every action with its count, in the contract’s order', () => {
    expect(actionCounts(counts()).map((r) => [r.key, r.label, r.count])).toEqual([
      ['PRE', ACTION_LABELS.PRE, 4],
      ['DUE', ACTION_LABELS.DUE, 0],
      ['POST', ACTION_LABELS.POST, 0],
      ['LOCK', ACTION_LABELS.LOCK, 2],
      ['UNLOCK', ACTION_LABELS.UNLOCK, 0],
      ['RELEASE', ACTION_LABELS.RELEASE, 0],
    ]);
    expect(actionsToSend(counts())).toBe(6);
  });

  it('lists only the reasons that skipped something, most first', () => {
    expect(skipCounts(counts()).map((r) => [r.label, r.count])).toEqual([
      [SKIP_LABELS.recentPayment, 3],
      [SKIP_LABELS.held, 1],
    ]);
    expect(skipCounts(emptyPlanCounts())).toEqual([]);
  });

  it('says nothing runs while the kill switch is on, whatever the policy; then a policy that is off', () => {
    expect(haltText({ killSwitch: true }, true)).toBe(L.nothingRuns);
    expect(haltText({ killSwitch: true }, false)).toBe(L.nothingRuns);
    expect(haltText({ killSwitch: false }, false)).toBe(L.policyOff);
    expect(haltText({ killSwitch: false }, true)).toBeNull();
  });

  it('gives an item one cell per column: status, amount with its currency, the rule', () => {
    const cells = planItemCells(item());
    expect(cells).toHaveLength(PLAN_ITEM_COLUMNS.length);
    expect(cells).toEqual([
      '356938035643809',
      ACTION_LABELS.LOCK,
      L.toSend,
      'Asha Rao',
      'LN-7',
      '2030-01-01',
      '1499.50 INR',
      '6',
      'collections v2: lock after 5 days overdue',
    ]);
    expect(planItemCells(item({ action: 'RELEASE', dueDate: null, amount: null }))[6]).toBe('');
  });

  it('an item is skipped (why), failed on the device, done already, or still to send', () => {
    expect(itemStatus({ skipped: 'promiseToPay', done: true, failure: null })).toBe(SKIP_LABELS.promiseToPay);
    expect(itemStatus({ skipped: 'operatorUnlock', done: false, failure: null })).toBe(
      SKIP_LABELS.operatorUnlock,
    );
    expect(itemStatus({ skipped: null, done: true, failure: null })).toBe(L.sent);
    expect(itemStatus({ skipped: null, done: false, failure: null })).toBe(L.toSend);
    // A done action whose command failed is not Done: it is retried, or given up.
    expect(
      itemStatus({ skipped: null, done: true, failure: { state: 'RETRYING', attempts: 2, of: 4 } }),
    ).toBe('Retrying (2 of 4)');
    expect(itemStatus({ skipped: null, done: true, failure: { state: 'FAILED', attempts: 4, of: 4 } })).toBe(
      'Failed',
    );
  });
});
