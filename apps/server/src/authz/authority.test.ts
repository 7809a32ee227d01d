import { describe, expect, it } from 'vitest';
import type { Principal } from '../core/principal';
import { mayControlBatchOf, mayUseAnyScreen } from './authority';
import { commands } from './resources/commands';

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

describe('the screens a command needs', () => {
  const user = (permissions: string[]) => ({ ...principal(1, 'USER'), permissions: new Set(permissions) });
  it('any one of them, and the Device Action screen only for a SUPERADMIN', () => {
    expect(mayUseAnyScreen(user(['gradeDisableApp']), ['disableApp', 'gradeDisableApp'])).toBe(true);
    expect(mayUseAnyScreen(user(['gradeDisableApp']), ['disableApp'])).toBe(false);
    expect(mayUseAnyScreen(principal(2, 'ADMIN'), ['lockDevice'])).toBe(true);
    expect(mayUseAnyScreen(principal(2, 'ADMIN'), ['deviceAction'])).toBe(false);
    expect(mayUseAnyScreen(principal(3, 'SUPERADMIN'), ['deviceAction'])).toBe(true);
    expect(mayUseAnyScreen(user([]), [])).toBe(false);
  });
});

describe('who reads a command by its transaction id (resources/commands.ts)', () => {
  const lock = (retailerPhone: string | null, issuerId: number | null) => ({
    retailerPhone,
    raw: 'LOCK',
    issuer: { userId: issuerId, level: 'SUPERADMIN' as const },
  });
  const user = (id: number, permissions: string[], retailerPhone: string | null = null) => ({
    ...principal(id, 'USER', retailerPhone),
    permissions: new Set(permissions),
  });
  it('who may see the device and issued it, may issue its kind, or reads the device’s commands', () => {
    expect(commands.read(user(5, []), lock(null, 9))).toBe(false);
    expect(commands.read(user(5, []), lock(null, 5))).toBe(true);
    expect(commands.read(user(5, ['lockDevice']), lock(null, 9))).toBe(true);
    expect(commands.read(user(5, ['deviceDetails']), lock(null, 9))).toBe(true);
    expect(commands.read(principal(2, 'ADMIN'), lock(null, 9))).toBe(true);
    // Another tenant's command, whatever the level.
    expect(commands.read(principal(2, 'ADMIN', '9000000001'), lock(null, 9))).toBe(false);
    expect(commands.read(principal(2, 'SUPERADMIN', '9000000001'), lock('9000000002', 9))).toBe(false);
    expect(commands.read(principal(2, 'ADMIN', '9000000001'), lock('9000000001', 9))).toBe(true);
  });
});
