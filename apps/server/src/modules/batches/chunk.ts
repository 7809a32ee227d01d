/**
 * One chunk of a batch, set-based, in ONE transaction: claim the batch's next chunk of unprocessed rows
 * (one `batch_chunks` row, SKIP LOCKED, so several workers and instances share a batch), record the
 * command for every row through commands/issue.ts (`recordCommandSet`, the rules of every command:
 * retailer scope, released and de-enrolled devices refused, a server-only command refused, newer state
 * supersedes older queued, a command waits behind an older QUEUED one of its device), and write each
 * row's result ('found', or 'not found' with the refusal as its note) to `batch_items`. The rows' results,
 * their commands and the chunk's removal commit together, so a crash at any point leaves every IMEI either
 * done once or not at all.
 */
import type { CommandOptions, RawCommand } from '@lendlock/contract';
import type { Transaction } from 'kysely';
import { PRIORITY_BULK } from '../../db/priority';
import type { BatchRow, DB } from '../../db/types';
import {
  type CommandOutcome,
  type CommandRequest,
  type RecordOptions,
  recordCommandSet,
} from '../commands/issue';
import { claimChunk, finishChunk, type ItemResult } from './repository';

export const CHUNK_SIZE = 50;
export const MAX_CHUNK_SIZE = 500;

/**
 * Rows per chunk for a batch of `rows`: 1 % of it, between CHUNK_SIZE and MAX_CHUNK_SIZE. A big batch
 * runs in few transactions (each costs a dozen statements, whatever its size), a small one still shows
 * its progress in many steps, and no chunk holds its devices locked for long (single commands wait for
 * the chunk that holds their device).
 */
export function chunkSizeFor(rows: number): number {
  return Math.min(MAX_CHUNK_SIZE, Math.max(CHUNK_SIZE, Math.ceil(rows / 100)));
}
export interface ChunkOutcome {
  processed: number;
  found: number;
  /** The chunk's commands and what became of them: publish and dispatch after commit (Dispatcher). */
  requests: CommandRequest[];
  outcomes: CommandOutcome[];
}

export async function processChunk(
  trx: Transaction<DB>,
  batch: Pick<BatchRow, 'id' | 'command' | 'options' | 'user_label' | 'user_id' | 'key_id' | 'interface'>,
  scope: { retailerPhone: string | null },
  /**
   * `send`: the device channel is up: commands for online devices are recorded as SENT in this
   * transaction and published by the caller after commit. If the process dies in between, the sweep
   * sends them again after COMMAND_RESEND_AFTER, and devices ignore ids they have executed.
   */
  record: Pick<RecordOptions, 'send' | 'oneShotTtlMs'>,
): Promise<ChunkOutcome> {
  const items = await claimChunk(trx, Number(batch.id));
  if (items.length === 0) return { processed: 0, found: 0, requests: [], outcomes: [] };
  const command = batch.command as RawCommand;
  const baseOptions = batch.options ?? {};
  const requests = items.map(
    (item): CommandRequest => ({
      imei: item.imei,
      command,
      options:
        command === 'NOTIFY'
          ? ({
              ...baseOptions,
              message: item.message ?? '',
              caseType: (item.template ?? 'Due') as 'Pre' | 'Due' | 'Post',
            } satisfies CommandOptions)
          : baseOptions,
      iface: batch.interface,
      priority: PRIORITY_BULK,
      issuer: { label: batch.user_label, userId: batch.user_id, keyId: batch.key_id },
      retailerPhone: scope.retailerPhone,
      batchId: Number(batch.id),
      audit: null,
    }),
  );
  const outcomes = await recordCommandSet(trx, requests, { ...record, serverCommands: false });
  const results = items.map((item, index): ItemResult => {
    const outcome = outcomes[index] as CommandOutcome;
    return outcome.recorded
      ? { seq: item.seq, result: 'found', note: null, tid: outcome.transactionId }
      : { seq: item.seq, result: 'not found', note: outcome.refusal, tid: null };
  });
  const last = items.reduce((a, b) => (b.seq > a.seq ? b : a));
  await finishChunk(trx, Number(batch.id), Number(items[0]?.first_seq), results, last);
  return {
    processed: items.length,
    found: results.filter((r) => r.result === 'found').length,
    requests,
    outcomes,
  };
}
