/** Loans: a loan belongs to its device's tenant; another tenant's loan is 'not found' like an unknown one. */
import type { Principal } from '../../plugins/auth';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface LoanObject {
  /** Its device's tenant. */
  readonly retailerPhone: Tenant;
}

export const loans = {
  scope: tenantScope,
  read: (p: Principal, loan: LoanObject) => sees(p, loan.retailerPhone),
  manage: (p: Principal, loan: LoanObject) => sees(p, loan.retailerPhone),
};
