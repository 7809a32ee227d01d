import { describe, expect, it } from 'vitest';
import { pushCapped, RecentIds } from './recent';

describe('pushCapped', () => {
  it('keeps only the last entries, oldest dropped first', () => {
    const list: number[] = [];
    for (let i = 1; i <= 25; i++) pushCapped(list, i, 10);
    expect(list).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
  });
});

describe('RecentIds', () => {
  it('forgets the oldest ids beyond its size once they are old enough', () => {
    let now = 0;
    const ids = new RecentIds<number>(3, 1000, () => now);
    for (const id of ['a', 'b', 'c', 'd', 'e']) {
      ids.set(id, 1);
      now += 100;
    }
    // All five arrived within the last 1000 ms: none is forgotten yet.
    expect([...ids.keys()]).toEqual(['a', 'b', 'c', 'd', 'e']);
    now += 1000;
    ids.set('f', 1);
    expect([...ids.keys()]).toEqual(['d', 'e', 'f']);
    expect(ids.has('a')).toBe(false);
    expect(ids.get('e')).toBe(1);
  });

  it('keeps an id set again as the newest', () => {
    let now = 0;
    const ids = new RecentIds<string>(2, 0, () => now);
    ids.set('a', 'first');
    ids.set('b', 'x');
    ids.set('a', 'second');
    now += 1;
    ids.set('c', 'y');
    expect([...ids.keys()]).toEqual(['a', 'c']);
    expect(ids.get('a')).toBe('second');
  });
});
