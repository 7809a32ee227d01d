/**
 * The policy editor's pure side: validate() accepts what the contract's schema accepts and names each
 * field's problem (with the schema's own ranges and messages), and a change reads as the confirmation and
 * the version history show it.
 */
import { COLLECTIONS_MESSAGES, DEFAULT_COLLECTIONS_POLICY, policyChanges } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { COLLECTIONS_LABELS as L } from './labels';
import {
  changeText,
  formFromPolicy,
  listEntries,
  type PolicyFormValues,
  settingText,
  validate,
} from './policyForm';

const form = (overrides: Partial<PolicyFormValues> = {}): PolicyFormValues => ({
  ...formFromPolicy(DEFAULT_COLLECTIONS_POLICY),
  ...overrides,
});

const errorsOf = (values: PolicyFormValues) => {
  const result = validate(values);
  if (result.ok) throw new Error('expected problems');
  return result.errors;
};

describe('validate()', () => {
  it('turns the default policy’s form back into the same policy', () => {
    expect(validate(form())).toEqual({ ok: true, policy: DEFAULT_COLLECTIONS_POLICY });
  });

  it('reads numbers, switches, the quiet hours and the lists (one entry per line, commas too, each once)', () => {
    const result = validate(
      form({
        enabled: true,
        preDaysBefore: ' 2 ',
        postEveryDays: '0',
        lockAfterDaysOverdue: '7',
        quietStart: '22:00',
        quietEnd: '08:00',
        excludedImeis: '356938035643809\n356938035643817, 356938035643809\n\n',
        excludedRetailers: '9876543210',
      }),
    );
    expect(result).toEqual({
      ok: true,
      policy: {
        ...DEFAULT_COLLECTIONS_POLICY,
        enabled: true,
        reminders: { preDaysBefore: 2, due: true, postEveryDays: 0 },
        lockAfterDaysOverdue: 7,
        quietHours: { start: '22:00', end: '08:00' },
        excludedImeis: ['356938035643809', '356938035643817'],
        excludedRetailers: ['9876543210'],
      },
    });
  });

  it('a lock switched off is null whatever its field holds; quiet hours off are null', () => {
    const result = validate(form({ lockEnabled: false, lockAfterDaysOverdue: 'x', quietEnabled: false }));
    expect(result.ok && result.policy.lockAfterDaysOverdue).toBeNull();
    expect(result.ok && result.policy.quietHours).toBeNull();
  });

  it.each([
    ['preDaysBefore', '', 0, 30],
    ['preDaysBefore', '31', 0, 30],
    ['postEveryDays', '2.5', 0, 30],
    ['postEveryDays', '-1', 0, 30],
    ['lockAfterDaysOverdue', '0', 1, 365],
    ['lockAfterDaysOverdue', '366', 1, 365],
    ['lockAfterDaysOverdue', 'five', 1, 365],
  ] as const)('refuses %s = %j with the schema’s range %i to %i', (field, value, min, max) => {
    expect(errorsOf(form({ [field]: value }))).toEqual({ [field]: L.wholeNumber(min, max) });
  });

  it('reads what a payment must cover to suspend a lock: an amount, a share, or neither (empty)', () => {
    const read = (values: Partial<PolicyFormValues>) => {
      const result = validate(form(values));
      return result.ok ? result.policy.lockPause : result.errors;
    };
    expect(read({ pauseMinAmount: ' 499.50 ', pauseMinShare: '' })).toEqual({
      minAmount: '499.50',
      minSharePercent: null,
    });
    expect(read({ pauseMinAmount: '', pauseMinShare: '40' })).toEqual({
      minAmount: null,
      minSharePercent: 40,
    });
    expect(read({ pauseMinAmount: '', pauseMinShare: '' })).toEqual({
      minAmount: null,
      minSharePercent: null,
    });
    expect(read({ pauseMinAmount: 'ten' })).toEqual({ pauseMinAmount: COLLECTIONS_MESSAGES.badMinAmount });
    expect(read({ pauseMinShare: '0' })).toEqual({ pauseMinShare: L.wholeNumber(1, 100) });
    expect(read({ pauseMinShare: '12.5' })).toEqual({ pauseMinShare: L.wholeNumber(1, 100) });
  });

  it('names the contract’s message for an unknown zone, a bad time, an empty quiet window', () => {
    expect(errorsOf(form({ timeZone: 'Mars/Olympus' }))).toEqual({
      timeZone: COLLECTIONS_MESSAGES.badTimeZone,
    });
    expect(errorsOf(form({ quietEnd: '24:00' }))).toEqual({ quietEnd: COLLECTIONS_MESSAGES.badTime });
    expect(errorsOf(form({ quietStart: '09:00', quietEnd: '09:00' }))).toEqual({
      quietStart: COLLECTIONS_MESSAGES.quietHoursEmpty,
    });
  });

  it('names the first bad entry of a list with the contract’s message', () => {
    expect(errorsOf(form({ excludedImeis: '356938035643809\n12345\n999' }))).toEqual({
      excludedImeis: L.entryProblem(COLLECTIONS_MESSAGES.badImei, '12345'),
    });
    expect(errorsOf(form({ excludedRetailers: '98765' }))).toEqual({
      excludedRetailers: L.entryProblem(COLLECTIONS_MESSAGES.badRetailer, '98765'),
    });
  });

  it('reports every bad field at once', () => {
    expect(
      Object.keys(errorsOf(form({ preDaysBefore: '', timeZone: 'Nowhere', excludedImeis: '1' }))).sort(),
    ).toEqual(['excludedImeis', 'preDaysBefore', 'timeZone']);
  });
});

describe('listEntries', () => {
  it('splits on lines, commas, semicolons and spaces, keeps the order, drops repeats and blanks', () => {
    expect(listEntries(' b\na, c;a\n\n b ')).toEqual(['b', 'a', 'c']);
    expect(listEntries('')).toEqual([]);
  });
});

describe('how a change reads', () => {
  const after = {
    ...DEFAULT_COLLECTIONS_POLICY,
    enabled: true,
    reminders: { ...DEFAULT_COLLECTIONS_POLICY.reminders, preDaysBefore: 0 },
    lockAfterDaysOverdue: null,
    release: 'AUTO' as const,
    quietHours: { start: '22:00', end: '07:30' },
    excludedImeis: ['356938035643809'],
  };

  it('names each changed field with its value before and after', () => {
    expect(policyChanges(DEFAULT_COLLECTIONS_POLICY, after).map(changeText)).toEqual([
      'Policy: off → on',
      'Pre reminder (days before): 3 → none',
      'Lock after days overdue: 5 → never',
      'Release at the last instalment: after an operator approves → automatically',
      'Quiet hours: 21:00–09:00 → 22:00–07:30',
      'Excluded IMEIs: added 356938035643809',
    ]);
  });

  it('names the lock pause’s minimums: an amount, a percentage, none', () => {
    const paused = { ...DEFAULT_COLLECTIONS_POLICY, lockPause: { minAmount: '500', minSharePercent: null } };
    expect(policyChanges(DEFAULT_COLLECTIONS_POLICY, paused).map(changeText)).toEqual([
      'Minimum payment to put a lock off: none → 500',
      'Minimum share of the arrears to put a lock off: 25% → none',
    ]);
  });

  it('a list says what was added and removed, five entries at most', () => {
    const many = Array.from({ length: 7 }, (_, i) => `98765432${String(i).padStart(2, '0')}`);
    expect(changeText({ field: 'excludedRetailers', from: ['9000000000'], to: many })).toBe(
      `Excluded retailers: added ${many.slice(0, 5).join(', ')} and 2 more; removed 9000000000`,
    );
  });

  it('the first version lists what it set', () => {
    expect(policyChanges(null, DEFAULT_COLLECTIONS_POLICY).map(settingText).slice(0, 3)).toEqual([
      'Policy: off',
      'Time zone: Asia/Kolkata',
      'Pre reminder (days before): 3',
    ]);
  });
});
