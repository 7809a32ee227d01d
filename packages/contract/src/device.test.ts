import { describe, expect, it } from 'vitest';
import { announceDelayMs, announceWithinMs, DEFAULT_ANNOUNCE_WITHIN_MS } from './device';

describe('the announcement the server asks for (device-protocol.md §2)', () => {
  it('spreads a fleet at 2,000 announcements a second, from 1 s to 10 minutes', () => {
    expect(announceWithinMs(0)).toBe(1000);
    expect(announceWithinMs(3)).toBe(1000);
    expect(announceWithinMs(100_000)).toBe(50_000);
    expect(announceWithinMs(1_000_000)).toBe(500_000);
    expect(announceWithinMs(5_000_000)).toBe(600_000);
  });

  it("waits a random share of the server's window, or of the default one when the message is unreadable", () => {
    const message = JSON.stringify({ status: 'online', announceWithinMs: 4000 });
    expect(announceDelayMs(message, () => 0)).toBe(0);
    expect(announceDelayMs(message, () => 0.5)).toBe(2000);
    expect(announceDelayMs(message, () => 0.999_999)).toBeLessThan(4000);
    expect(announceDelayMs('online', () => 0.5)).toBe(DEFAULT_ANNOUNCE_WITHIN_MS / 2);
    expect(announceDelayMs(JSON.stringify({ status: 'online', announceWithinMs: -1 }), () => 0.5)).toBe(
      DEFAULT_ANNOUNCE_WITHIN_MS / 2,
    );
  });
});
