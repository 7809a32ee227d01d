import { describe, expect, it } from 'vitest';
import { barGeometry, labelledIndexes } from './bars';

describe('barGeometry', () => {
  it('scales the tallest bar to the full height, bottoms on the axis, and spaces the slots evenly', () => {
    const bars = barGeometry([1, 4, 2, 0], 400, 100, 0.5);
    expect(bars.map((b) => b.height)).toEqual([25, 100, 50, 0]);
    expect(bars.map((b) => b.y + b.height)).toEqual([100, 100, 100, 100]);
    expect(bars.map((b) => b.x)).toEqual([25, 125, 225, 325]);
    expect(bars.every((b) => b.width === 50)).toBe(true);
  });

  it('draws nothing above the axis for all-zero data and no bar for no data', () => {
    expect(barGeometry([0, 0], 100, 50).map((b) => b.height)).toEqual([0, 0]);
    expect(barGeometry([], 100, 50)).toEqual([]);
  });
});

describe('labelledIndexes', () => {
  it('labels about six evenly spaced bars of 30 days, always the last', () => {
    const labelled = [...labelledIndexes(30)].sort((a, b) => a - b);
    expect(labelled).toEqual([4, 9, 14, 19, 24, 29]);
    expect([...labelledIndexes(3)].sort()).toEqual([0, 1, 2]);
    expect(labelledIndexes(0).size).toBe(0);
  });
});
