/**
 * Enrollment secrets admit a device's registration into any tenant (the registration names its
 * retailer): they are the lender's, so only the lender's users (SUPERADMIN, by the route table) list,
 * add or revoke them.
 */
import type { Principal } from '../../plugins/auth';

export const enrollment = {
  scope: (p: Principal) => ({ lender: p.retailerPhone === null }),
  manage: (p: Principal, _secrets: 'secrets') => p.retailerPhone === null,
};
