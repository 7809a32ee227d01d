/**
 * Console users (User Management; docs/tenancy.md "People"). The one rule of who
 * may see, add and change which account:
 *
 * - Tenant: a user sees and touches only accounts of its own tenant. The lender's users (no retailer
 *   phone) see every account; a retailer's users only that retailer's, whatever their level. Another
 *   tenant's account is answered as an unknown one (the services refuse `read` with their not-found).
 * - Level, within the tenant: a SUPERADMIN manages any account, an ADMIN USER accounts only
 *   (`canManage`, which the console reads too); only a SUPERADMIN gives the ADMIN or SUPERADMIN level.
 * - A retailer's new user belongs to that retailer, whatever the request named (`tenantOfNewUser`).
 * - One's own account: sign-out, two-factor set-up and status (`self`).
 */
import { canManage, levelsGivenBy, type UserLevel } from '@lendlock/contract';
import type { Principal } from '../../core/principal';
import { sees, type Tenant, tenantScope } from '../tenancy';

/** What the rules need to know of an account. */
export interface UserObject {
  readonly id: number;
  readonly userlevel: UserLevel;
  readonly retailerPhone: Tenant;
}

/**
 * The tenant of an account `p` creates: a retailer's user creates accounts of its own retailer only, so
 * whatever the request named (null, another phone) is replaced by its own; the lender's user gives the
 * retailer the request named (null: the lender). Silently, not refused: the spec's addUser.php has no
 * retailer field and the console sends none.
 */
export function tenantOfNewUser(p: Pick<Principal, 'retailerPhone'>, requested: Tenant | undefined): Tenant {
  return p.retailerPhone ?? requested ?? null;
}

const read = (p: Principal, target: UserObject) => sees(p, target.retailerPhone);
/** Change, disable, force out, re-permission, reset two-factor authentication, switch keys off. */
const manage = (p: Principal, target: UserObject) => read(p, target) && canManage(p, target.userlevel);

export const users = {
  scope: tenantScope,
  read,
  manage,
  create: (p: Principal, target: Pick<UserObject, 'userlevel' | 'retailerPhone'>) =>
    sees(p, target.retailerPhone) && levelsGivenBy(p.userlevel).includes(target.userlevel),
  /** Giving a managed account another level: only to a level `p` gives (a SUPERADMIN any). */
  changeLevel: (p: Principal, change: { readonly target: UserObject; readonly to: UserLevel }) =>
    manage(p, change.target) && levelsGivenBy(p.userlevel).includes(change.to),
  /** One's own account (sign-out, two-factor set-up and status). */
  self: (p: Principal, target: Pick<UserObject, 'id'>) => target.id === p.userId,
};
