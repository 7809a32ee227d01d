/**
 * Collections on autopilot. Its actions (reminders, locks, releases awaiting approval), holds and a
 * device's failed actions belong to their device's tenant: another tenant's is 'not found' exactly like an
 * unknown one, and lists show the caller's tenant's only. The policy, the kill switch and the runs govern
 * every tenant's loans: only the lender steers them (a retailer's user, whatever its level, changes none);
 * among the lender's users, only a SUPERADMIN saves the policy or resumes collections, while any of its
 * ADMINs may stop them (the route table admits ADMIN and SUPERADMIN only).
 */
import type { Principal } from '../../core/principal';
import { sees, type Tenant, tenantScope } from '../tenancy';

/** An object of one tenant: a device's hold, an action, a release, a device's failures. */
interface TenantObject {
  readonly retailerPhone: Tenant;
}

/** What governs every tenant. */
type Steered = 'policy' | 'killSwitch' | 'run';

const lender = (p: Principal) => p.retailerPhone === null;

export const collections = {
  scope: tenantScope,
  /** A device's holds, releases or failed actions. */
  read: (p: Principal, object: TenantObject) => sees(p, object.retailerPhone),
  /** Holding a device, or removing its hold. */
  hold: (p: Principal, object: TenantObject) => sees(p, object.retailerPhone),
  /** Approving or rejecting a release awaiting approval. */
  decide: (p: Principal, release: TenantObject) => sees(p, release.retailerPhone),
  /**
   * Reading what governs every tenant: the policy in force (its versions), the kill switch, the runs. Any
   * caller the route table admits: the console shows a retailer's ADMIN the plan of its devices under it.
   */
  view: (_p: Principal, _object: Steered) => true,
  /** Changing what governs every tenant (the lender's): the tenant rule. */
  steer: (p: Principal, _object: Steered) => lender(p),
  /** Saving a policy version: the lender's SUPERADMIN. */
  savePolicy: (p: Principal, _object: 'policy') => lender(p) && p.userlevel === 'SUPERADMIN',
  /** Turning the kill switch off: the lender's SUPERADMIN (stopping is any of its ADMINs'). */
  resume: (p: Principal, _object: 'killSwitch') => lender(p) && p.userlevel === 'SUPERADMIN',
};
