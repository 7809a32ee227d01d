/**
 * Loans: a loan belongs to its device's tenant (the device's retailer; the lender sees all); another
 * tenant's loan is 'not found' exactly like an unknown one. Its references (`loan_ref`, its payments'
 * `payment_ref`) are its tenant's own: unique per tenant, so a retailer's look-up by ref reads only its own
 * and a lender-wide one names the tenant when two use the same (docs/tenancy.md).
 */
import type { Principal } from '../../core/principal';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface LoanObject {
  /** Its device's tenant (for a loan to import: the device it is imported on). */
  readonly retailerPhone: Tenant;
}

export const loans = {
  /** Whose references a look-up by ref reads: a retailer its own, the lender every tenant's. */
  scope: tenantScope,
  read: (p: Principal, loan: LoanObject) => sees(p, loan.retailerPhone),
  /** Importing a loan on a device, replacing its schedule, setting its promise to pay. */
  manage: (p: Principal, loan: LoanObject) => sees(p, loan.retailerPhone),
  /** Naming a tenant's references (`retailerPhone` of a request): the lender any, a retailer its own. */
  nameTenant: (p: Principal, tenant: LoanObject) => sees(p, tenant.retailerPhone),
};
