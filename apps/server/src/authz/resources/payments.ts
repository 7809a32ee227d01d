/**
 * Payments belong to their loan (loans.ts): its device's tenant. A payment_ref is unique within its loan's
 * tenant; another tenant's payment is 'not found' exactly like an unknown one.
 */
import { loans } from './loans';

export const payments = {
  scope: loans.scope,
  read: loans.read,
  record: loans.manage,
  reverse: loans.manage,
};
