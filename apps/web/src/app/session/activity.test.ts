import { describe, expect, it } from 'vitest';
import { createSessionActivity } from './activity';

const memoryStorage = () => {
  const items = new Map<string, string>();
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
};

describe('session activity', () => {
  it('keeps the latest use, seen by every tab on the same storage', () => {
    const storage = memoryStorage();
    const tab = createSessionActivity(storage);
    const other = createSessionActivity(storage);
    expect(tab.lastUsedAt()).toBeNull();
    tab.markUsed(2_000);
    other.markUsed(1_000);
    expect(tab.lastUsedAt()).toBe(2_000);
    other.markUsed(3_000);
    expect(tab.lastUsedAt()).toBe(3_000);
  });
});
