/**
 * Uploaded batch files follow their batch: served only to who may read it (batches.ts `read`, the rule
 * `batch/results` applies), with the same answers. The bulk-upload history (Reports) lists every user's
 * uploads to the lender and a retailer's user only its own; it links a file only where `read` allows.
 */
import type { Principal } from '../../core/principal';
import { type BatchScope, batches } from './batches';

export interface UploadScope {
  /** The history's rows: every user's (null), or one user's uploads. */
  readonly rowsOf: number | null;
  /** The files it links. */
  readonly files: BatchScope;
}

export const uploads = {
  scope: (p: Principal): UploadScope => ({
    rowsOf: p.retailerPhone === null ? null : p.userId,
    files: batches.scope(p),
  }),
  see: batches.see,
  use: batches.use,
  read: batches.read,
};
