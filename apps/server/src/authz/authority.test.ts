import { describe, expect, it } from 'vitest';
import type { Principal } from '../plugins/auth';
import { mayControlBatchOf } from './authority';

const principal = (userId: number, userlevel: Principal['userlevel'], retailerPhone: string | null = null) =>
  ({
    credential: 'session',
    userId,
    email: `u${userId}@lendlock.com`,
    userlevel,
    permissions: new Set(),
    retailerPhone,
  }) as Principal;

describe('who reads or steers a batch', () => {
  it('its owner, or a strictly higher level that is not a retailer user', () => {
    expect(mayControlBatchOf(principal(1, 'USER'), { userId: 1, level: 'USER' })).toBe(true);
    expect(mayControlBatchOf(principal(2, 'ADMIN'), { userId: 1, level: 'USER' })).toBe(true);
    expect(mayControlBatchOf(principal(2, 'ADMIN'), { userId: 1, level: 'ADMIN' })).toBe(false);
    expect(mayControlBatchOf(principal(2, 'ADMIN'), { userId: 1, level: 'SUPERADMIN' })).toBe(false);
    expect(mayControlBatchOf(principal(3, 'SUPERADMIN'), { userId: 1, level: 'ADMIN' })).toBe(true);
    // A retailer's ADMIN or SUPERADMIN: only their own batches (another user's may name any retailer's devices).
    expect(mayControlBatchOf(principal(2, 'ADMIN', '9000000001'), { userId: 1, level: 'USER' })).toBe(false);
    expect(mayControlBatchOf(principal(3, 'SUPERADMIN', '9000000001'), { userId: 1, level: 'ADMIN' })).toBe(
      false,
    );
    expect(
      mayControlBatchOf(principal(3, 'SUPERADMIN', '9000000001'), { userId: 3, level: 'SUPERADMIN' }),
    ).toBe(true);
  });
});
