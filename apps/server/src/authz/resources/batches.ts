/**
 * Batches (design.md §5): read and steered by their owner or a strictly higher level of the lender; a
 * retailer's user, whatever its level, only its own (another user's file may name any device).
 */
import type { Principal } from '../../plugins/auth';
import { type IssuerLevel, mayControlBatchOf } from '../authority';
import { tenantScope } from '../tenancy';

export interface BatchObject {
  readonly owner: { readonly userId: number | null; readonly level: IssuerLevel };
}

const control = (p: Principal, batch: BatchObject) => mayControlBatchOf(p, batch.owner);

export const batches = {
  scope: tenantScope,
  read: control,
  control,
};
