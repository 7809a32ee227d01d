/** Webhook endpoints and their deliveries belong to the tenant that made the endpoint. */
import type { Principal } from '../../core/principal';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface EndpointObject {
  readonly retailerPhone: Tenant;
}

export const webhooks = {
  scope: tenantScope,
  read: (p: Principal, endpoint: EndpointObject) => sees(p, endpoint.retailerPhone),
  manage: (p: Principal, endpoint: EndpointObject) => sees(p, endpoint.retailerPhone),
};
