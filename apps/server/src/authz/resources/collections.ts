/**
 * Collections on autopilot. Its actions and holds belong to their device's tenant. The policy, the kill
 * switch and the runs govern every tenant's loans: only the lender steers them.
 */
import type { Principal } from '../../plugins/auth';
import { sees, type Tenant, tenantScope } from '../tenancy';

export const collections = {
  scope: tenantScope,
  read: (p: Principal, object: { readonly retailerPhone: Tenant }) => sees(p, object.retailerPhone),
  hold: (p: Principal, object: { readonly retailerPhone: Tenant }) => sees(p, object.retailerPhone),
  steer: (p: Principal, _object: 'policy' | 'killSwitch' | 'run') => p.retailerPhone === null,
};
