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

/** ADMIN and SUPERADMIN pass every permission check. */
export function passesEveryPermission(level: string | undefined): boolean {
  return level === 'ADMIN' || level === 'SUPERADMIN';
}

/**
 * Whether `actor` may change, disable, force out or reset an account of `targetLevel`: a
 * SUPERADMIN any account, an ADMIN USER accounts only. The server enforces it; the console shows a row's
 * controls only where it holds.
 */
export function canManage(actor: { readonly userlevel: string }, targetLevel: UserLevel): boolean {
  return actor.userlevel === 'SUPERADMIN' || (actor.userlevel === 'ADMIN' && targetLevel === 'USER');
}

/** The levels `actorLevel` may give, to a new account or by a change: a SUPERADMIN any, others USER only. */
export function levelsGivenBy(actorLevel: string | undefined): readonly UserLevel[] {
  return actorLevel === 'SUPERADMIN' ? USER_LEVELS : ['USER'];
}
