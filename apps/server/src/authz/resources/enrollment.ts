/**
 * Enrollment secrets admit a device's registration into any tenant (the registration names its
 * retailer): they are the lender's, so only the lender's users (SUPERADMIN, by the route table) list,
 * add or revoke them.
 */
import type { Principal } from '../../core/principal';
import { tenantScope } from '../tenancy';

export const enrollment = {
  /** (Secrets have no tenant: a list of them is all or, for a retailer's user, refused by `manage`.) */
  scope: tenantScope,
  manage: (p: Principal, _secrets: 'secrets') => p.retailerPhone === null,
};
