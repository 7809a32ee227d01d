/**
 * Authority over what someone else started (design.md §5, "authority follows the command"). The route
 * table (policies.ts) decides who may call a route at all; these rules decide, once the handler has the
 * object in hand, who may touch THAT pending command or THAT batch: the permission of its command's
 * screen, and a level measured against whoever issued it. One place for the rule, read by the command
 * service (cancel) and the batch service (read, pause, resume, discard).
 *
 * Levels: USER < ADMIN < SUPERADMIN. A command or batch issued through an API key counts as the key
 * owner's level (the key acts with its owner's rights); one issued by the system (the reconcile, which
 * re-sends what the desired state asks for) counts as ADMIN, so an ADMIN or SUPERADMIN may cancel it
 * but a USER may not.
 */
import { type ScreenName, screenByName, screensOfCommand, type UserLevel } from '@lendlock/contract';
import { hasPermission, type Principal } from '../plugins/auth';

/** Who issued a command or started a batch: a user's level, or the system. */
export type IssuerLevel = UserLevel | 'system';

const RANK: Record<IssuerLevel, number> = { USER: 0, ADMIN: 1, system: 1, SUPERADMIN: 2 };

/** An issuer's level from its user row: no user is the system; an unknown level ranks highest. */
export function issuerLevel(userId: number | null, level: UserLevel | null | undefined): IssuerLevel {
  if (userId === null) return 'system';
  return level ?? 'SUPERADMIN';
}

/** A screen's permission; a SUPERADMIN-only screen (Device Action) needs SUPERADMIN, whatever is held. */
export function mayUseScreen(principal: Principal, screen: ScreenName): boolean {
  if (screenByName(screen)?.guard === 'superadminOnly') return principal.userlevel === 'SUPERADMIN';
  return hasPermission(principal, screen);
}

/** The permission of a raw command's screen (any one of its screens). */
export function mayUseCommand(principal: Principal, raw: string): boolean {
  return screensOfCommand(raw).some((screen) => mayUseScreen(principal, screen));
}

/** Cancelling a pending command: nobody cancels a command issued by a higher level (equal is fine). */
export function mayCancelIssuedBy(principal: Principal, issuer: IssuerLevel): boolean {
  return RANK[principal.userlevel] >= RANK[issuer];
}

/**
 * Reading or steering a batch: its owner (the user who started it, by session or by one of their keys),
 * or a strictly higher level. Another user of the same level is not higher: an ADMIN does not steer
 * another ADMIN's batch, nor a SUPERADMIN another SUPERADMIN's. A retailer's user, whatever the level,
 * sees only their own batches: another user's file may name any retailer's devices.
 */
export function mayControlBatchOf(
  principal: Principal,
  owner: { userId: number | null; level: IssuerLevel },
) {
  if (owner.userId === principal.userId) return true;
  return principal.retailerPhone === null && RANK[principal.userlevel] > RANK[owner.level];
}
