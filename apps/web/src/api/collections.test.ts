/**
 * The collections calls: each goes to its path with the method and body the contract describes, its query
 * key names every parameter the fetch sends, and the plan's CSV is POSTed for (the dry run's unsaved
 * policy travels in the sealed body) and saved under the server's name or the contract's.
 */
import { DEFAULT_COLLECTIONS_POLICY, emptyPlanCounts, planFileName } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { fakeApi, fileApi } from '../test/fakeApi';
import {
  collectionKeys,
  decideRelease,
  exportPlan,
  fetchPlan,
  listHolds,
  listReleases,
  putHold,
  removeHold,
  setKillSwitch,
} from './collections';

const policy = { ...DEFAULT_COLLECTIONS_POLICY, lockAfterDaysOverdue: 9 };
const plan = {
  status: 'success',
  date: '2030-03-09',
  timeZone: 'Asia/Kolkata',
  version: null,
  killSwitch: false,
  runsAt: '09:00',
  counts: emptyPlanCounts(),
  items: [],
  cursor: null,
};

describe('collections calls', () => {
  it('a plan page sends only what is asked: no day is today, no policy is the saved one', async () => {
    const { api, calls } = fakeApi(() => plan);
    await fetchPlan(api, { date: null, policy: null, filter: 'ALL', limit: 200, cursor: null });
    await fetchPlan(api, { date: '2030-03-09', policy, filter: 'LOCK', limit: 50, cursor: 'c1' });
    expect(calls.map((c) => [c.script, c.options.method, c.options.body])).toEqual([
      ['v2/collections/plan', 'POST', { filter: 'ALL', limit: 200 }],
      [
        'v2/collections/plan',
        'POST',
        { date: '2030-03-09', policy, filter: 'LOCK', limit: 50, cursor: 'c1' },
      ],
    ]);
  });

  it('a plan’s key names the day, the policy (field by field), the filter and the page size', () => {
    const base = { date: '2030-03-09', policy, filter: 'ALL' as const };
    const keys = [
      collectionKeys.plan(base, 200),
      collectionKeys.plan({ ...base, date: '2030-03-10' }, 200),
      collectionKeys.plan({ ...base, policy: { ...policy, lockAfterDaysOverdue: 10 } }, 200),
      collectionKeys.plan({ ...base, policy: null }, 200),
      collectionKeys.plan({ ...base, filter: 'SKIPPED' }, 200),
      collectionKeys.plan(base, 100),
    ].map((key) => JSON.stringify(key));
    expect(new Set(keys).size).toBe(keys.length);
    expect(collectionKeys.holds('356938035643809')).not.toEqual(collectionKeys.holds(null));
    expect(collectionKeys.releases('APPROVED')).not.toEqual(collectionKeys.releases('REJECTED'));
  });

  it('the plan CSV is POSTed for with the unsaved policy in the body, and saved under the server’s name', async () => {
    const { api, requests } = fileApi(
      new Response('\uFEFFIMEI,Loan\r\n', {
        headers: {
          'content-type': 'text/csv; charset=utf-8',
          'content-disposition': 'attachment; filename="collections-plan_2030-03-09.csv"',
        },
      }),
    );
    const file = await exportPlan(api, { date: '2030-03-09', policy, filter: 'SKIPPED', fallbackDate: 'x' });
    expect(requests.map((r) => [r.url, r.method])).toEqual([
      ['http://console.test/api/v2/collections/plan/export', 'POST'],
    ]);
    expect(JSON.parse(String(requests[0]?.body))).toEqual({ date: '2030-03-09', policy, filter: 'SKIPPED' });
    expect(requests[0]?.headers.get('Content-Type')).toBe('application/json');
    expect(requests[0]?.headers.get('X-API-Key')).toBe('tok-1');
    expect(file.fileName).toBe('collections-plan_2030-03-09.csv');
  });

  it('without the header, today’s plan CSV is named after the day the plan answered', async () => {
    const { api, requests } = fileApi(new Response('x'));
    const file = await exportPlan(api, {
      date: null,
      policy: null,
      filter: 'ALL',
      fallbackDate: '2030-03-09',
    });
    expect(JSON.parse(String(requests[0]?.body))).toEqual({ filter: 'ALL' });
    expect(file.fileName).toBe(planFileName('2030-03-09'));
  });

  it('holds, the kill switch and the release queue go to their paths with their methods', async () => {
    const { api, calls } = fakeApi((script) => {
      if (script.startsWith('v2/collections/holds?') || script === 'v2/collections/holds')
        return { status: 'success', items: [] };
      if (script.startsWith('v2/collections/holds/'))
        return {
          status: 'success',
          message: 'ok',
          hold: { imei: '356938035643809', reason: 'r', heldBy: 'a', heldAt: 'now', retailerPhone: null },
        };
      if (script === 'v2/collections/kill-switch')
        return {
          status: 'success',
          message: 'ok',
          on: true,
          reason: 'r',
          changedBy: 'a',
          changedAt: 'now',
          cancelled: 0,
        };
      if (script.startsWith('v2/collections/releases?')) return { status: 'success', items: [] };
      return {
        status: 'success',
        message: 'ok',
        release: {
          id: 3,
          loanId: 1,
          loanRef: 'L',
          imei: '356938035643809',
          customerName: 'A',
          retailerPhone: null,
          paidAt: null,
          queuedAt: 'now',
          state: 'APPROVED',
          decidedBy: 'a',
          decidedAt: 'now',
          transactionId: 't',
        },
      };
    });
    await listHolds(api, null);
    await listHolds(api, '356938035643809');
    await putHold(api, { imei: '356938035643809', reason: 'dispute' });
    await removeHold(api, '356938035643809');
    await setKillSwitch(api, { on: true, reason: 'r' });
    await listReleases(api, 'AWAITING_APPROVAL');
    await decideRelease(api, { id: 3, decision: 'approve' });
    await decideRelease(api, { id: 3, decision: 'reject', reason: 'no' });
    expect(calls.map((c) => [c.script, c.options.method ?? 'GET', c.options.body])).toEqual([
      ['v2/collections/holds', 'GET', undefined],
      ['v2/collections/holds?imei=356938035643809', 'GET', undefined],
      ['v2/collections/holds/356938035643809', 'PUT', { reason: 'dispute' }],
      ['v2/collections/holds/356938035643809', 'DELETE', undefined],
      ['v2/collections/kill-switch', 'PUT', { on: true, reason: 'r' }],
      ['v2/collections/releases?state=AWAITING_APPROVAL', 'GET', undefined],
      ['v2/collections/releases/3/approve', 'POST', {}],
      ['v2/collections/releases/3/reject', 'POST', { reason: 'no' }],
    ]);
  });
});
