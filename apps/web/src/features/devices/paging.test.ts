import { describe, expect, it } from 'vitest';
import { DEVICE_PAGE_SIZE, pageOf } from './paging';

const items = Array.from({ length: 120 }, (_, i) => i + 1);

describe('pageOf', () => {
  it('pages 50 rows at a time', () => {
    expect(DEVICE_PAGE_SIZE).toBe(50);
    expect(pageOf(items, 1)).toMatchObject({ start: 0, page: 1, pages: 3 });
    expect(pageOf(items, 1).rows).toEqual(items.slice(0, 50));
    expect(pageOf(items, 3).rows).toEqual(items.slice(100));
  });

  it('keeps the page within range', () => {
    expect(pageOf(items, 9)).toMatchObject({ page: 3, start: 100 });
    expect(pageOf(items, 0)).toMatchObject({ page: 1, start: 0 });
    expect(pageOf([], 1)).toEqual({ rows: [], start: 0, page: 1, pages: 1 });
  });
});
