/** Payments belong to their loan (loans.ts). */
import { loans } from './loans';

export const payments = {
  scope: loans.scope,
  read: loans.read,
  record: loans.manage,
  reverse: loans.manage,
};
