/**
 * The tenant model (docs/tenancy.md). The lender is the tenant without a retailer: its users (and the
 * system: jobs, the device channel, the collections engine) see every row. A retailer is a tenant named by
 * its phone: its users see only rows of that retailer. A row's tenant is the retailer phone it carries
 * (users, devices, webhook endpoints) or that of the row it belongs to (a command's device, a key's
 * owner, a batch's user, a loan's device).
 */
import type { Principal } from '../core/principal';

/** A principal's tenant: null for the lender, a retailer's phone otherwise. */
export type Tenant = string | null;

/** The rows a list may show: every tenant's (`retailerPhone: null`) or one retailer's. */
export interface TenantScope {
  readonly retailerPhone: Tenant;
}

/** Whether `principal` may see a row of tenant `rowTenant`: the lender sees all, a retailer its own. */
export function sees(principal: Pick<Principal, 'retailerPhone'>, rowTenant: Tenant | undefined): boolean {
  return principal.retailerPhone === null || principal.retailerPhone === (rowTenant ?? null);
}

/** The tenant scope of a principal's lists. */
export function tenantScope(principal: Pick<Principal, 'retailerPhone'>): TenantScope {
  return { retailerPhone: principal.retailerPhone };
}
