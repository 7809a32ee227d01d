/** Devices: a retailer sees the devices registered for it; the lender every device. */
import type { Principal } from '../../plugins/auth';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface DeviceObject {
  readonly retailerPhone: Tenant;
}

export const devices = {
  scope: tenantScope,
  read: (p: Principal, device: DeviceObject) => sees(p, device.retailerPhone),
};
