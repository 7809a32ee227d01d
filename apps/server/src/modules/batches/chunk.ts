/**
 * One chunk of a batch, set-based, in ONE transaction: claim the batch's next chunk of unprocessed rows
 * (one `batch_chunks` row, SKIP LOCKED, so several workers and instances share a batch), decide found /
 * not found for each, issue the command to every found device (interface B, the same rules as a single
 * command: retailer scope, released and de-enrolled devices refused, newer state supersedes older
 * queued), and write each row's result to `batch_items` as the chunk's row goes. The rows' results, their commands and the chunk's removal commit
 * together, so a crash at any point leaves every IMEI either done once or not at all.
 */
import { randomUUID } from 'node:crypto';
import {
  applyCommand,
  type CommandOptions,
  commandKind,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  type RawCommand,
  stateKeyOf,
} from '@lendlock/contract';
import { sql, type Transaction } from 'kysely';
import type { BatchRow, DB } from '../../db/types';
import type { ClaimedDeviceCommand } from '../commands/repository';

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
/** Batch commands yield to single ones (design.md §4). */
export const BATCH_PRIORITY = 0;

export interface ChunkOutcome {
  processed: number;
  found: number;
  /** Devices that received a command. */
  imeis: string[];
  /** The commands for online devices, recorded as SENT: publish them after commit (see below). */
  toSend: ClaimedDeviceCommand[];
  /**
   * Online devices whose new command was recorded QUEUED behind an older QUEUED one (on another state key,
   * or a one-shot): dispatch them after commit, which sends their commands oldest first.
   */
  toDispatch: string[];
}

interface ClaimedItem {
  first_seq: number;
  seq: number;
  imei: string;
  message: string | null;
  template: string | null;
}

interface DeviceLite {
  /** The row's physical address: stable while this transaction holds its lock. */
  row: string;
  imei1: string;
  online: boolean;
  imei2: string | null;
  claimstatus: string;
  retailer_phone: string | null;
  released: boolean;
  /** An older command of the device, that this chunk does not supersede, is still QUEUED. */
  waiting: boolean;
}

/** The part of the desired state a command sets (RELEASE sets all of it). */
function desiredPatch(command: RawCommand, options: CommandOptions): Partial<DeviceState> {
  const after = applyCommand(INITIAL_DEVICE_STATE, command, options);
  if (command === 'RELEASE') return after;
  const key = stateKeyOf(command);
  return key ? { [key]: after[key] } : {};
}

export async function processChunk(
  trx: Transaction<DB>,
  batch: Pick<BatchRow, 'id' | 'command' | 'options' | 'user_label' | 'user_id' | 'key_id' | 'interface'>,
  scope: { retailerPhone: string | null },
  oneShotTtlMs: number,
  /**
   * The device channel is up: commands for online devices are recorded as SENT in this transaction and
   * published by the caller after commit, as a dispatch claim would (one statement fewer per chunk). If
   * the process dies in between, the sweep sends them again after COMMAND_RESEND_AFTER, and devices
   * ignore ids they have executed.
   */
  send = false,
): Promise<ChunkOutcome> {
  const claimed = await sql<ClaimedItem>`
    WITH chunk AS (
      SELECT * FROM batch_chunks WHERE batch_id = ${batch.id} ORDER BY first_seq LIMIT 1 FOR UPDATE SKIP LOCKED
    )
    SELECT chunk.first_seq, u.seq, u.imei, u.message, u.template
    FROM chunk, unnest(chunk.seqs, chunk.imeis, chunk.messages, chunk.templates) AS u(seq, imei, message, template)
    ORDER BY u.seq`.execute(trx);
  const items = claimed.rows;
  if (items.length === 0) return { processed: 0, found: 0, imeis: [], toSend: [], toDispatch: [] };

  const command = batch.command as RawCommand;
  const kind = commandKind(command);
  const stateKey = stateKeyOf(command);
  const imeis = [...new Set(items.map((i) => i.imei))];
  // Lock the devices in a stable order (no deadlock between workers), by either IMEI. `waiting`: a
  // command recorded as SENT would overtake an older QUEUED one (as in recordCommands); a probe of the
  // small partial index of QUEUED commands.
  const found = await sql<DeviceLite>`
    SELECT ctid::text AS row, imei1, online, imei2, claimstatus, retailer_phone,
      coalesce((desired_state->>'released')::boolean, false) AS released,
      EXISTS (SELECT 1 FROM commands c WHERE c.imei1 = devices.imei1 AND c.status = 'QUEUED'
              AND (${stateKey}::text IS NULL OR c.state_key IS DISTINCT FROM ${stateKey}::text)) AS waiting
    FROM devices
    WHERE imei1 = ANY(${imeis}::text[]) OR imei2 = ANY(${imeis}::text[])
    ORDER BY imei1 FOR UPDATE`.execute(trx);
  const byImei = new Map<string, DeviceLite>();
  for (const device of found.rows) {
    byImei.set(device.imei1, device);
    if (device.imei2 && !byImei.has(device.imei2)) byImei.set(device.imei2, device);
  }

  const baseOptions = batch.options ?? {};
  const results: { seq: number; result: 'found' | 'not found'; note: string | null; tid: string | null }[] =
    [];
  const commands: {
    transaction_id: string;
    imei1: string;
    options: string;
    parsed: CommandOptions;
    sent: boolean;
  }[] = [];
  const targets = new Set<string>();
  /** The targets' rows, locked above and not updated since: their desired state is set by address. */
  const targetRows = new Set<string>();
  const toDispatch = new Set<string>();
  for (const item of items) {
    const device = byImei.get(item.imei);
    let note: string | null = null;
    if (!device || (scope.retailerPhone && device.retailer_phone !== scope.retailerPhone))
      note = 'not registered';
    else if (device.claimstatus === 'RELEASED' || device.released) note = 'released';
    else if (device.claimstatus === 'DEENROLLED') note = 'de-enrolled';
    else if (kind === 'server') note = 'single only';
    if (note || !device) {
      results.push({ seq: item.seq, result: 'not found', note, tid: null });
      continue;
    }
    const options: CommandOptions =
      command === 'NOTIFY'
        ? {
            ...baseOptions,
            message: item.message ?? '',
            caseType: (item.template ?? 'Due') as 'Pre' | 'Due' | 'Post',
          }
        : baseOptions;
    const tid = randomUUID();
    commands.push({
      transaction_id: tid,
      imei1: device.imei1,
      options: JSON.stringify(options),
      parsed: options,
      sent: send && device.online && !device.waiting,
    });
    if (send && device.online && device.waiting) toDispatch.add(device.imei1);
    targets.add(device.imei1);
    targetRows.add(device.row);
    results.push({ seq: item.seq, result: 'found', note: null, tid });
  }

  const toSend: ClaimedDeviceCommand[] = [];
  if (commands.length > 0) {
    const targetList = [...targets];
    if (stateKey) {
      await sql`UPDATE commands SET status = 'SUPERSEDED', completed_at = now()
        WHERE imei1 = ANY(${targetList}::text[]) AND state_key = ${stateKey} AND status = 'QUEUED'`.execute(
        trx,
      );
    }
    const expiresAt = kind === 'oneshot' ? new Date(Date.now() + oneShotTtlMs) : null;
    const createdAt = new Date();
    // One row per command from arrays (unnest): a statement of 4 arrays, not of 15 parameters per row.
    const inserted = await sql<{ id: number; transaction_id: string }>`
      INSERT INTO commands (transaction_id, imei1, command, options, kind, state_key, interface, status, sent_at,
                            priority, user_label, user_id, key_id, batch_id, expires_at)
      SELECT v.tid, v.imei, ${command}::text, v.options::jsonb, ${kind}::text, ${stateKey}::text,
             ${batch.interface}::text, CASE WHEN v.sent THEN 'SENT' ELSE 'QUEUED' END,
             CASE WHEN v.sent THEN now() END, ${BATCH_PRIORITY}::smallint, ${batch.user_label}::text,
             ${batch.user_id}::int, ${batch.key_id}::int, ${batch.id}::bigint, ${expiresAt}::timestamptz
      FROM unnest(${commands.map((c) => c.transaction_id)}::text[], ${commands.map((c) => c.imei1)}::text[],
                  ${commands.map((c) => c.options)}::text[], ${commands.map((c) => c.sent)}::boolean[])
        AS v(tid, imei, options, sent)
      RETURNING id, transaction_id`.execute(trx);
    const ids = new Map(inserted.rows.map((row) => [row.transaction_id, Number(row.id)]));
    commands.forEach((c) => {
      const id = ids.get(c.transaction_id);
      if (c.sent && id !== undefined) {
        toSend.push({
          id,
          transaction_id: c.transaction_id,
          imei1: c.imei1,
          command,
          options: c.parsed,
          created_at: createdAt,
        });
      }
    });
    const patch = JSON.stringify(desiredPatch(command, baseOptions));
    await sql`UPDATE devices SET desired_state = desired_state || ${patch}::jsonb,
        last_command = ${command}, last_command_at = now()
      WHERE ctid = ANY(${[...targetRows]}::tid[])`.execute(trx);
  }

  // The chunk's rows leave `batch_chunks` and enter `batch_items` with their results, in one statement.
  await sql`
    WITH done AS (
      DELETE FROM batch_chunks WHERE batch_id = ${batch.id} AND first_seq = ${items[0]?.first_seq}
      RETURNING *
    )
    INSERT INTO batch_items (batch_id, seq, imei, name, amount, date, template, header, message, result, note,
                             transaction_id, processed_at)
    SELECT done.batch_id, u.seq, u.imei, u.name, u.amount, u.date, u.template, u.header, u.message, r.result,
           r.note, r.tid, now()
    FROM done,
      unnest(done.seqs, done.imeis, done.names, done.amounts, done.dates, done.templates, done.headers, done.messages)
        AS u(seq, imei, name, amount, date, template, header, message)
      JOIN unnest(${results.map((r) => r.seq)}::int[], ${results.map((r) => r.result)}::text[],
                  ${results.map((r) => r.note)}::text[], ${results.map((r) => r.tid)}::text[])
        AS r(seq, result, note, tid) ON r.seq = u.seq`.execute(trx);

  const foundCount = results.filter((r) => r.result === 'found').length;
  const last = items.reduce((a, b) => (b.seq > a.seq ? b : a));
  await sql`UPDATE batches SET processed = processed + ${items.length}, found = found + ${foundCount},
      not_found = not_found + ${items.length - foundCount},
      last_imei = CASE WHEN ${last.seq} > last_seq THEN ${last.imei} ELSE last_imei END,
      last_seq = greatest(last_seq, ${last.seq}), updated_at = now()
    WHERE id = ${batch.id}`.execute(trx);
  return {
    processed: items.length,
    found: foundCount,
    imeis: [...targets],
    toSend,
    toDispatch: [...toDispatch],
  };
}
