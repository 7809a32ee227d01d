/**
 * Issuing: the ONE implementation that records commands, whatever their path (a single command from the
 * console or an API key, a batch chunk, device action ALL, which runs as a batch without a file, and the
 * reconcile). `recordCommandSet` takes a set of command requests and, in the caller's transaction, applies
 * every rule:
 *
 * - refusals: a device not registered, or another retailer's (the same 'not registered': its existence is
 *   not leaked), released (or with a release on its way), de-enrolled; a command the server carries out
 *   itself (FORMATTEDDEVICE) in a batch;
 * - FORMATTEDDEVICE de-enrolls the device at once and settles its open commands (devices/repository.ts);
 * - a newer command on a state key supersedes the older QUEUED one on that key;
 * - a command for an online device (broker reachable) is recorded SENT, for the caller to publish after
 *   commit, unless an older command of its device is still QUEUED: then it waits QUEUED behind it;
 * - the device's desired state and last command; the audit row, where asked;
 * - who decided the desired value (`devices.desired_cause`, `commands.cause`): collections for a `C`
 *   command, an operator for any other; the reconcile's commands restore a value and keep its cause.
 *
 * Set-based: one statement locks the devices (imei1 order), one records the commands (repository.ts,
 * `recordCommands`). Several requests for one device are recorded in rounds, the n-th request of every
 * device in the n-th statement, so that each sees the ones before it exactly as if issued one by one.
 */
import { randomUUID } from 'node:crypto';
import {
  applyCommand,
  type CommandInterface,
  type CommandOptions,
  type CommandStatus,
  commandKind,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  type RawCommand,
  stateKeyOf,
} from '@lendlock/contract';
import type { Transaction } from 'kysely';
import type { DB, DesiredCause } from '../../db/types';
import type { AuditValues } from '../audit/repository';
import { deenrollDevice, type LockedDevice, lockDevices } from '../devices/repository';
import { commandEvents, deenrolledEvent, type EventSink } from '../webhooks/events';
import { type CommandRecord, type RecordedCommand, recordCommands } from './repository';

/** Why a command was not recorded (the `note` a batch row shows beside 'not found'). */
export type Refusal = 'not registered' | 'released' | 'de-enrolled' | 'single only';

/** One command to record. */
export interface CommandRequest {
  /** Either IMEI of the device. */
  imei: string;
  command: RawCommand;
  options: CommandOptions;
  iface: CommandInterface;
  /** commands.priority (db/priority.ts): single and API 2, reconcile 1, batch and ALL 0. */
  priority: number;
  /** Who issued it: the user (and key), or 'system'. */
  issuer: { label: string; userId: number | null; keyId: number | null };
  /** A retailer user's commands reach only that retailer's devices. */
  retailerPhone: string | null;
  batchId: number | null;
  /** The audit row to write with the command (single commands); null for batch work. */
  audit: { address: string | null; details?: Record<string, unknown> } | null;
  /**
   * The reconcile: the command restores a desired value whose cause this is. The command records that
   * cause and the device keeps who decided the value, and when. Otherwise the command decides: its
   * cause is collections for interface `C`, an operator for any other.
   */
  restores?: DesiredCause;
}

export type CommandOutcome =
  | {
      recorded: true;
      transactionId: string;
      id: number;
      imei1: string;
      status: CommandStatus;
      createdAt: Date;
      /** The device was online when the command was recorded. */
      online: boolean;
      priority: number;
    }
  | { recorded: false; refusal: Refusal }
  /** `skipLocked`: the device is held by another transaction (or not found); try again on its own. */
  | { recorded: false; refusal: 'busy' };

export interface RecordOptions {
  /** The broker is reachable and the caller publishes after commit: online devices' commands go SENT. */
  send: boolean;
  /** How long a one-shot command (notify, reboot…) stays valid. */
  oneShotTtlMs: number;
  /** Devices other transactions hold are not waited for: their requests come back 'busy'. */
  skipLocked?: boolean;
  /** FORMATTEDDEVICE and the like are refused ('single only'): batches. */
  serverCommands?: boolean;
  /** Webhook events of a de-enrollment (device.deenrolled, command.cancelled of its settled commands). */
  events?: EventSink;
}

/** The part of the desired state a command sets (RELEASE sets all of it); null for one-shots. */
export function desiredPatch(command: RawCommand, options: CommandOptions): Partial<DeviceState> | null {
  const after = applyCommand(INITIAL_DEVICE_STATE, command, options);
  if (command === 'RELEASE') return after;
  const key = stateKeyOf(command);
  return key ? { [key]: after[key] } : null;
}

function refusalOf(device: LockedDevice | undefined, request: CommandRequest, serverCommands: boolean) {
  if (!device || (request.retailerPhone && device.retailer_phone !== request.retailerPhone))
    return 'not registered' as const;
  if (device.claimstatus === 'RELEASED' || device.desired_state?.released) return 'released' as const;
  if (device.claimstatus === 'DEENROLLED') return 'de-enrolled' as const;
  if (!serverCommands && commandKind(request.command) === 'server') return 'single only' as const;
  return null;
}

/**
 * Records `requests` in the caller's transaction (see the top of this file); the outcomes come back in
 * the order of the requests. The caller publishes, after commit, the outcomes with status SENT, and
 * dispatches the devices that were online with a command left QUEUED.
 */
export async function recordCommandSet(
  trx: Transaction<DB>,
  requests: readonly CommandRequest[],
  options: RecordOptions,
): Promise<CommandOutcome[]> {
  if (requests.length === 0) return [];
  const locked = await lockDevices(
    trx,
    requests.map((r) => r.imei),
    { byImei2: true, skipLocked: options.skipLocked ?? false },
  );
  // By imei1 first, then by imei2 (the lowest imei1 holding it).
  const byImei = new Map<string, LockedDevice>();
  for (const device of locked) byImei.set(device.imei1, device);
  for (const device of locked)
    if (device.imei2 && !byImei.has(device.imei2)) byImei.set(device.imei2, device);

  const outcomes: CommandOutcome[] = new Array(requests.length);
  // Rounds: the n-th request of each device goes in the n-th statement.
  const rounds: { index: number; device: LockedDevice }[][] = [];
  const seen = new Map<string, number>();
  for (const [index, request] of requests.entries()) {
    const device = byImei.get(request.imei);
    if (!device) {
      outcomes[index] = options.skipLocked
        ? { recorded: false, refusal: 'busy' }
        : { recorded: false, refusal: 'not registered' };
      continue;
    }
    const round = seen.get(device.imei1) ?? 0;
    seen.set(device.imei1, round + 1);
    const slot = rounds[round] ?? [];
    rounds[round] = slot;
    slot.push({ index, device });
  }

  for (const round of rounds) {
    const records: { index: number; record: CommandRecord; device: LockedDevice }[] = [];
    for (const { index, device } of round) {
      const request = requests[index] as CommandRequest;
      const refusal = refusalOf(device, request, options.serverCommands ?? true);
      if (refusal) {
        outcomes[index] = { recorded: false, refusal };
        continue;
      }
      const record = recordOf(request, device, options);
      if (record.command.kind === 'server') {
        // FORMATTEDDEVICE: the phone was formatted, its agent is gone; the server de-enrolls it now.
        const settled = await deenrollDevice(trx, device);
        await options.events?.emit(trx, [
          ...commandEvents(settled),
          deenrolledEvent({
            imei1: device.imei1,
            imei2: device.imei2,
            transactionId: record.command.transaction_id,
          }),
        ]);
        device.claimstatus = 'DEENROLLED';
        device.online = false;
      }
      if (record.patch) device.desired_state = { ...device.desired_state, ...JSON.parse(record.patch) };
      records.push({ index, record, device });
    }
    const recorded = new Map<string, RecordedCommand>(
      (
        await recordCommands(
          trx,
          records.map((r) => r.record),
        )
      ).map((row) => [row.transaction_id, row]),
    );
    for (const { index, record, device } of records) {
      const row = recorded.get(record.command.transaction_id);
      if (!row) throw new Error('command not recorded');
      outcomes[index] = {
        recorded: true,
        transactionId: row.transaction_id,
        id: row.id,
        imei1: device.imei1,
        status: row.status,
        createdAt: new Date(row.created_at),
        online: device.online,
        priority: record.command.priority,
      };
    }
  }
  return outcomes;
}

function recordOf(request: CommandRequest, device: LockedDevice, options: RecordOptions): CommandRecord {
  const kind = commandKind(request.command);
  const transactionId = randomUUID();
  // FORMATTEDDEVICE is carried out by the server itself: recorded as executed.
  const status: CommandStatus = kind === 'server' ? 'EXECUTED' : 'QUEUED';
  const patch = desiredPatch(request.command, request.options);
  const cause: DesiredCause = request.restores ?? (request.iface === 'C' ? 'collections' : 'operator');
  const audit: AuditValues | null = request.audit
    ? {
        actor_user_id: request.issuer.userId,
        actor_key_id: request.issuer.keyId,
        actor: request.issuer.label,
        action: `command.${request.command}`,
        target: device.imei1,
        address: request.audit.address,
        result: status,
        details: JSON.stringify({
          transactionId,
          interface: request.iface,
          options: request.options,
          batchId: request.batchId,
          ...request.audit.details,
        }),
      }
    : null;
  return {
    command: {
      transaction_id: transactionId,
      imei1: device.imei1,
      command: request.command,
      options: JSON.stringify(request.options),
      kind,
      state_key: stateKeyOf(request.command),
      interface: request.iface,
      status,
      result: kind === 'server' ? 'de-enrolled by the server' : null,
      completed_at: status === 'EXECUTED' ? new Date() : null,
      priority: request.priority,
      user_label: request.issuer.label,
      user_id: request.issuer.userId,
      key_id: request.issuer.keyId,
      batch_id: request.batchId,
      expires_at: kind === 'oneshot' ? new Date(Date.now() + options.oneShotTtlMs) : null,
      cause: patch ? cause : null,
    },
    patch: patch ? JSON.stringify(patch) : null,
    decides: request.restores === undefined,
    sendNow: options.send && status === 'QUEUED' && device.online,
    audit,
  };
}
