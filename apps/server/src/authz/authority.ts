/**
 * Authority over what someone else started (authority follows the command). The route
 * table (policies.ts) decides who may call a route at all; these rules decide, once the handler has the
 * object in hand, who may touch THAT pending command or THAT batch: the permission of its command's
 * screen, and a level measured against whoever issued it. Read only by the policy files of resources/
 * (commands.ts, batches.ts): services ask those, through the authority module (index.ts).
 *
 * Levels: USER < ADMIN < SUPERADMIN. A command or batch issued through an API key counts as the key
 * owner's level (the key acts with its owner's rights); one issued by the system (the reconcile, which
 * re-sends what the desired state asks for) counts as ADMIN, so an ADMIN or SUPERADMIN may cancel it
 * but a USER may not.
 */
import { type ScreenName, screenByName, screensOfCommand } from '@lendlock/contract';
import { hasPermission, type Principal } from '../core/principal';
import type { IssuerLevel } from './issuer';

const RANK: Record<IssuerLevel, number> = { USER: 0, ADMIN: 1, system: 1, SUPERADMIN: 2 };

/** A screen's permission; a SUPERADMIN-only screen (Device Action) needs SUPERADMIN, whatever is held. */
export function mayUseScreen(principal: Principal, screen: ScreenName): boolean {
  if (screenByName(screen)?.guard === 'superadminOnly') return principal.userlevel === 'SUPERADMIN';
  return hasPermission(principal, screen);
}

/** The permission of any one of `screens` (a command that more than one screen issues). */
export function mayUseAnyScreen(principal: Principal, screens: readonly ScreenName[]): boolean {
  return screens.some((screen) => mayUseScreen(principal, screen));
}

/** The permission of a raw command's screen (any one of its screens). */
export function mayUseCommand(principal: Principal, raw: string): boolean {
  return mayUseAnyScreen(principal, screensOfCommand(raw));
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
): boolean {
  if (owner.userId === principal.userId) return true;
  return principal.retailerPhone === null && RANK[principal.userlevel] > RANK[owner.level];
}
