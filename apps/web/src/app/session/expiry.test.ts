import type { Session } from '@lendlock/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchSessionExpiry } from './expiry';

const fakeStore = (expiry: string) => {
  let session: Pick<Session, 'expiry'> | null = { expiry };
  return {
    get: () => session as Session | null,
    end: vi.fn(() => {
      session = null;
    }),
  };
};

describe('watchSessionExpiry', () => {
  beforeEach(() => vi.useFakeTimers({ now: Date.parse('2030-01-01T00:00:00.000Z') }));
  afterEach(() => vi.useRealTimers());

  it('removes the session and calls onExpired on the first tick at or after the expiry', () => {
    const store = fakeStore('2030-01-01T00:00:03.500Z');
    const onExpired = vi.fn();
    const stop = watchSessionExpiry(store, { intervalMs: 1000, onExpired });
    vi.advanceTimersByTime(3000);
    expect(onExpired).not.toHaveBeenCalled();
    expect(store.end).not.toHaveBeenCalled();
    vi.advanceTimersByTime(1000);
    expect(store.end).toHaveBeenCalledTimes(1);
    expect(store.end).toHaveBeenCalledWith({ reason: 'expired' });
    expect(onExpired).toHaveBeenCalledTimes(1);
    vi.advanceTimersByTime(5000);
    expect(onExpired).toHaveBeenCalledTimes(1);
    stop();
  });

  it('acts at once on a session that has already expired', () => {
    const store = fakeStore('2029-12-31T23:59:59.000Z');
    const onExpired = vi.fn();
    const stop = watchSessionExpiry(store, { intervalMs: 1000, onExpired });
    expect(onExpired).toHaveBeenCalledTimes(1);
    stop();
  });

  it('stops checking once stopped', () => {
    const store = fakeStore('2030-01-01T00:00:01.000Z');
    const onExpired = vi.fn();
    watchSessionExpiry(store, { intervalMs: 1000, onExpired })();
    vi.advanceTimersByTime(5000);
    expect(onExpired).not.toHaveBeenCalled();
  });
});
