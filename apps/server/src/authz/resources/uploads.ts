/** Uploaded batch files: served only to who may read their batch (batches.ts). */
import { batches } from './batches';

export const uploads = {
  scope: batches.scope,
  read: batches.read,
};
