import type { BatchListItem, BatchProgress, BatchResult } from '@lendlock/contract';
import type { BatchItemRow, BatchRow } from '../../db/types';
import { batchPhase } from './service';

const iso = (value: Date | null): string | null => (value ? new Date(value).toISOString() : null);

export function toBatchProgress(batch: BatchRow, now = Date.now()): BatchProgress {
  const started = batch.started_at ? new Date(batch.started_at).getTime() : null;
  const ended = batch.completed_at ? new Date(batch.completed_at).getTime() : now;
  return {
    batchId: Number(batch.id),
    statusOf: batch.feature,
    command: batch.command,
    batchfilename: batch.file_name,
    isComplete: batch.status,
    phase: batchPhase(batch, now),
    lastimei: batch.last_imei,
    total: batch.total,
    valid: batch.valid,
    invalid: batch.invalid,
    found: batch.found,
    notFound: batch.not_found,
    processed: batch.processed,
    createdAt: new Date(batch.created_at).toISOString(),
    startedAt: iso(batch.started_at),
    completedAt: iso(batch.completed_at),
    elapsedMs: started === null ? 0 : Math.max(0, ended - started),
    // Only while the batch is still held by it (a resume clears it; a discarded batch is not paused).
    pausedReason: batch.status === 'incomplete' ? batch.paused_reason : null,
  };
}

export function toBatchResult(item: BatchItemRow): BatchResult {
  return {
    sno: item.seq,
    imei: item.imei,
    validate: item.result,
    note: item.note,
    transactionId: item.transaction_id,
    name: item.name,
    amount: item.amount,
    date: item.date,
    template: item.template,
    header: item.header,
    notification: item.message,
  };
}

/** A batch as the Batches screen lists it: its progress, its owner's email and its interface. */
export function toBatchListItem(batch: BatchRow, now = Date.now()): BatchListItem {
  return { ...toBatchProgress(batch, now), owner: batch.user_label, interface: batch.interface };
}
