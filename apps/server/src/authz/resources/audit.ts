/**
 * The audit log: the lender reads all of it; a retailer's user the entries about its retailer's devices and
 * its own actions.
 */
import type { Principal } from '../../core/principal';
import { sees, type Tenant } from '../tenancy';

/** What a list of audit entries may show: everything, or one retailer's devices and one user's actions. */
export type AuditScope = null | { readonly retailerPhone: string; readonly userId: number };

export const audit = {
  scope: (p: Principal): AuditScope =>
    p.retailerPhone === null ? null : { retailerPhone: p.retailerPhone, userId: p.userId },
  read: (p: Principal, entry: { readonly retailerPhone: Tenant }) => sees(p, entry.retailerPhone),
};
