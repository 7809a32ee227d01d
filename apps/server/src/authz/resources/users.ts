/**
 * Console users (User Management, spec §5; design.md §5). A user sees and manages only users of its own
 * tenant (a retailer's ADMIN: its retailer's users; the lender's: everyone), and within it by level: a
 * SUPERADMIN any account, an ADMIN USER accounts only (`canManage`). A retailer's new user belongs to
 * that retailer, whatever the request said.
 */
import { canManage, levelsGivenBy, type UserLevel } from '@lendlock/contract';
import type { Principal } from '../../plugins/auth';
import { sees, type Tenant, tenantScope } from '../tenancy';

/** What the rules need to know of an account. */
export interface UserObject {
  readonly id: number;
  readonly userlevel: UserLevel;
  readonly retailerPhone: Tenant;
}

export const users = {
  scope: tenantScope,
  read: (p: Principal, target: UserObject) => sees(p, target.retailerPhone),
  /** Change, disable, force out, re-permission, reset two-factor authentication. */
  manage: (p: Principal, target: UserObject) =>
    sees(p, target.retailerPhone) && canManage(p, target.userlevel),
  create: (p: Principal, target: Pick<UserObject, 'userlevel' | 'retailerPhone'>) =>
    sees(p, target.retailerPhone) && levelsGivenBy(p.userlevel).includes(target.userlevel),
  /** One's own account (sign-out, two-factor set-up, own password). */
  self: (p: Principal, target: Pick<UserObject, 'id'>) => target.id === p.userId,
};
