import { describe, expect, it } from 'vitest';
import { imeiFor, luhnDigit, rng } from './imei';

describe('simulated IMEIs', () => {
  it('are 15 digits with a valid Luhn check digit', () => {
    expect(luhnDigit('49015420323751')).toBe(8); // a published example IMEI: 490154203237518
    for (let i = 0; i < 100; i++) {
      const imei = imeiFor(7, i);
      expect(imei).toMatch(/^\d{15}$/);
      expect(Number(imei.at(-1))).toBe(luhnDigit(imei.slice(0, 14)));
    }
  });

  it('are reproducible from the seed and distinct within a fleet', () => {
    expect(imeiFor(3, 5)).toBe(imeiFor(3, 5));
    expect(new Set(Array.from({ length: 1000 }, (_, i) => imeiFor(3, i))).size).toBe(1000);
    expect(rng(9)()).toBe(rng(9)());
  });
});
