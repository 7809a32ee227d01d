import { describe, expect, it } from 'vitest';
import { neutraliseFormula } from './formula';

describe('neutraliseFormula', () => {
  it.each(['=1+1', '+91 98765', '-5', '@SUM(A1:A2)', '\t=1', '\r=1', '=a\nb'])(
    'prefixes %j with a single quote',
    (value) => {
      expect(neutraliseFormula(value)).toBe(`'${value}`);
    },
  );

  it.each(['', '356938035643809', 'LOCK', 'a=b', ' =1', "'=1", 'SET WALLPAPER'])(
    'leaves %j as it is',
    (value) => {
      expect(neutraliseFormula(value)).toBe(value);
    },
  );
});
