/**
 * Devices: a retailer sees the devices registered for it (and their registrations, commands, counts);
 * the lender every device. The financed-IMEI list decides the Match_Status of every retailer's devices:
 * only the lender changes it.
 */
import type { Principal } from '../../core/principal';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface DeviceObject {
  readonly retailerPhone: Tenant;
}

export const devices = {
  scope: tenantScope,
  read: (p: Principal, device: DeviceObject) => sees(p, device.retailerPhone),
  /** Approving or rejecting a re-registration of the device: an ADMIN or SUPERADMIN of its tenant. */
  manage: (p: Principal, device: DeviceObject) => sees(p, device.retailerPhone) && p.userlevel !== 'USER',
  importFinanced: (p: Principal, _list: 'financed') => p.retailerPhone === null,
};
