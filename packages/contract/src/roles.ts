import { z } from 'zod';

export const USER_LEVELS = ['USER', 'ADMIN', 'SUPERADMIN'] as const;
export const userLevelSchema = z.enum(USER_LEVELS);
export type UserLevel = z.infer<typeof userLevelSchema>;

export const USER_STATUSES = ['ACTIVE', 'INACTIVE'] as const;
export type UserStatus = (typeof USER_STATUSES)[number];
export const LOGIN_STATUSES = ['LOGIN', 'LOGOUT'] as const;
export type LoginStatus = (typeof LOGIN_STATUSES)[number];
export const KEY_STATUSES = ['active', 'inactive'] as const;
export type KeyStatus = (typeof KEY_STATUSES)[number];

/** The value of `loggedin` in a signed-in session. */
export const LOGGED_IN = 'loginValidated';

/** ADMIN and SUPERADMIN pass every permission check (design.md §5). */
export function passesEveryPermission(level: string | undefined): boolean {
  return level === 'ADMIN' || level === 'SUPERADMIN';
}
