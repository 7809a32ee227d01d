import { describe, expect, it } from 'vitest';
import { needsImeiHint, searchableImei } from './imeiSearch';

describe('searchableImei (acts only on exactly 15 characters)', () => {
  it('gives the IMEI at exactly 15 digits', () => {
    expect(searchableImei('356938035643809')).toBe('356938035643809');
  });

  it.each([
    '',
    '3',
    '35693803564380',
    '3569380356438091',
    '35693803564380a',
    ' 35693803564380',
    '35693803564380 ',
  ])('gives null for %j (the results are cleared)', (typed) => {
    expect(searchableImei(typed)).toBeNull();
  });

  it('hints only at 15 characters that are not all digits', () => {
    expect(needsImeiHint('35693803564380a')).toBe(true);
    expect(needsImeiHint('356938035643809')).toBe(false);
    expect(needsImeiHint('3569380356438')).toBe(false);
    expect(needsImeiHint('')).toBe(false);
  });
});
