import { describe, expect, it } from 'vitest';
import { FORMULA_START } from './formula';
import { incorrectDataCsv } from './imeiCsv';

describe('FORMULA_START: the cells a CSV neutralises', () => {
  it.each(['=1+1', '+91 98765', '-5', '@SUM(A1:A2)', '\t=1', '\r=1', '=a\nb'])('catches %j', (value) => {
    expect(FORMULA_START.test(value)).toBe(true);
  });

  it.each(['', '356938035643809', 'LOCK', 'a=b', ' =1', "'=1", 'SET WALLPAPER'])('leaves %j', (value) => {
    expect(FORMULA_START.test(value)).toBe(false);
  });

  it('keeps the visible leading apostrophe in a CSV download (CSV has no string cells)', async () => {
    const csv = await incorrectDataCsv([{ line: 2, data: '=HYPERLINK("x")', error: 'Invalid IMEI' }]);
    expect(csv.split('\r\n')[1]).toBe(`2,"'=HYPERLINK(""x"")",Invalid IMEI`);
  });
});
