import { describe, expect, it } from 'vitest';
import { collectionsPolicySchema, DEFAULT_COLLECTIONS_POLICY, DEFAULT_LOCK_PAUSE } from './api/collections';
import { inQuietHours, lenderClock, policyChanges, ruleText, runMaySend } from './collections';

describe('collections, the pure part', () => {
  it('reads the lender’s day and time in its zone, not UTC', () => {
    // 19:00 UTC on 4 March is 00:30 on 5 March in India.
    expect(lenderClock('Asia/Kolkata', new Date('2026-03-04T19:00:00Z'))).toEqual({
      date: '2026-03-05',
      minutes: 30,
    });
    expect(lenderClock('UTC', new Date('2026-03-04T19:00:00Z'))).toEqual({
      date: '2026-03-04',
      minutes: 1140,
    });
  });

  it('reads quiet hours that cross midnight and those that do not', () => {
    const night = { start: '21:00', end: '09:00' };
    expect(inQuietHours(night, 21 * 60)).toBe(true);
    expect(inQuietHours(night, 8 * 60 + 59)).toBe(true);
    expect(inQuietHours(night, 9 * 60)).toBe(false);
    const lunch = { start: '13:00', end: '14:00' };
    expect(inQuietHours(lunch, 13 * 60 + 30)).toBe(true);
    expect(inQuietHours(lunch, 12 * 60)).toBe(false);
    expect(inQuietHours(null, 3 * 60)).toBe(false);
  });

  it('lets the run send from the end of the quiet hours, in the lender’s zone', () => {
    const policy = {
      ...DEFAULT_COLLECTIONS_POLICY,
      timeZone: 'Asia/Kolkata',
      quietHours: { start: '21:00', end: '09:00' },
    };
    expect(runMaySend(policy, new Date('2026-03-05T03:15:00Z'))).toBe(false); // 08:45 IST
    expect(runMaySend(policy, new Date('2026-03-05T03:45:00Z'))).toBe(true); // 09:15 IST
    expect(runMaySend(policy, new Date('2026-03-05T15:45:00Z'))).toBe(false); // 21:15 IST
    const lunch = { ...policy, quietHours: { start: '13:00', end: '14:00' } };
    expect(runMaySend(lunch, new Date('2026-03-05T04:30:00Z'))).toBe(false); // 10:00 IST: before its end
    expect(runMaySend(lunch, new Date('2026-03-05T09:00:00Z'))).toBe(true); // 14:30 IST
  });

  it('names the rule of each automated command with the version', () => {
    const policy = {
      ...DEFAULT_COLLECTIONS_POLICY,
      lockAfterDaysOverdue: 1,
      reminders: { preDaysBefore: 3, due: true, postEveryDays: 2 },
    };
    expect(ruleText(3, 'LOCK', policy)).toBe('collections v3: lock after 1 day overdue');
    expect(ruleText(3, 'PRE', policy)).toBe('collections v3: Pre reminder 3 days before the due date');
    expect(ruleText(null, 'POST', policy)).toBe('collections draft: Post reminder every 2 days overdue');
  });

  it('names what changed between two versions: reminders field by field, the rest whole', () => {
    const before = DEFAULT_COLLECTIONS_POLICY;
    const after = {
      ...before,
      reminders: { ...before.reminders, preDaysBefore: 5 },
      quietHours: null,
      excludedImeis: ['356938035643809'],
    };
    expect(policyChanges(before, after)).toEqual([
      { field: 'reminders.preDaysBefore', from: 3, to: 5 },
      { field: 'quietHours', from: { start: '21:00', end: '09:00' }, to: null },
      { field: 'excludedImeis', from: [], to: ['356938035643809'] },
    ]);
    expect(policyChanges(before, before)).toEqual([]);
    expect(policyChanges(null, before).map((c) => c.field)).toContain('reminders.due');
  });

  it('names the lock pause’s minimums field by field; a policy saved without them reads the default', () => {
    const before = DEFAULT_COLLECTIONS_POLICY;
    const after = { ...before, lockPause: { minAmount: '500', minSharePercent: null } };
    expect(policyChanges(before, after)).toEqual([
      { field: 'lockPause.minAmount', from: null, to: '500' },
      { field: 'lockPause.minSharePercent', from: 25, to: null },
    ]);
    const { lockPause: _, ...older } = before;
    expect(collectionsPolicySchema.parse(older).lockPause).toEqual(DEFAULT_LOCK_PAUSE);
  });
});
