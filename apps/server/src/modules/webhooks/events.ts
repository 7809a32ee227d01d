/**
 * The webhook events of what happened, built from the rows that say so (docs/operations.md § Webhooks
 * lists each event's `data`). The parts of the system where things happen hand these to
 * WebhookDelivery.emit in their own transaction.
 */
import type { WebhookEvent } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import type { EventRecord } from './repository';

/** A command whose status just became final (or cancelled), as the pipeline's rows carry it. */
export interface SettledCommand {
  transaction_id: string;
  imei1: string;
  command: string;
  status: string;
  interface?: string | null;
  batch_id?: number | string | null;
  result?: string | null;
  user_label?: string | null;
}

const COMMAND_EVENTS = {
  EXECUTED: 'command.executed',
  FAILED: 'command.failed',
  EXPIRED: 'command.expired',
  CANCELLED: 'command.cancelled',
} as const;

/**
 * command.executed / failed / expired / cancelled for each settled command, and device.released for an
 * executed RELEASE.
 */
export function commandEvents(
  commands: readonly SettledCommand[],
  imei2Of?: (imei1: string) => string | null,
): EventRecord[] {
  const events: EventRecord[] = [];
  for (const c of commands) {
    const type = COMMAND_EVENTS[c.status as keyof typeof COMMAND_EVENTS];
    if (!type) continue;
    events.push({
      type,
      imei1: c.imei1,
      data: {
        transactionId: c.transaction_id,
        imei1: c.imei1,
        command: c.command,
        interface: c.interface ?? null,
        batchId: c.batch_id === null || c.batch_id === undefined ? null : Number(c.batch_id),
        result: c.result ?? null,
      },
    });
    if (c.status === 'EXECUTED' && c.command === 'RELEASE')
      events.push({
        type: 'device.released',
        imei1: c.imei1,
        data: {
          imei1: c.imei1,
          imei2: imei2Of?.(c.imei1) ?? null,
          transactionId: c.transaction_id,
          releasedBy: c.user_label ?? null,
        },
      });
  }
  return events;
}

export function batchCompletedEvent(batch: {
  id: number;
  command: string;
  file_name?: string | null;
  total: number;
  found: number;
  not_found: number;
  retailer_phone?: string | null;
}): EventRecord {
  return {
    type: 'batch.completed',
    retailerPhone: batch.retailer_phone ?? null,
    data: {
      batchId: Number(batch.id),
      command: batch.command,
      fileName: batch.file_name ?? null,
      total: Number(batch.total),
      found: Number(batch.found),
      notFound: Number(batch.not_found),
    },
  };
}

export function deviceRegisteredEvent(device: {
  imei1: string;
  imei2: string | null;
  brand?: string | null;
  model?: string | null;
  retailerPhone: string | null;
  registrationStatus: string;
}): EventRecord {
  return {
    type: 'device.registered',
    imei1: device.imei1,
    retailerPhone: device.retailerPhone,
    data: {
      imei1: device.imei1,
      imei2: device.imei2,
      brand: device.brand ?? null,
      model: device.model ?? null,
      retailerPhone: device.retailerPhone,
      registrationStatus: device.registrationStatus,
    },
  };
}

export function reregistrationRequestedEvent(request: {
  id: number;
  imei1: string;
  newKey: boolean;
}): EventRecord {
  return {
    type: 'device.reregistration_requested',
    imei1: request.imei1,
    data: { requestId: request.id, imei1: request.imei1, newKey: request.newKey },
  };
}

export function deenrolledEvent(device: {
  imei1: string;
  imei2: string | null;
  transactionId: string | null;
}): EventRecord {
  return {
    type: 'device.deenrolled',
    imei1: device.imei1,
    data: { imei1: device.imei1, imei2: device.imei2, transactionId: device.transactionId },
  };
}

/**
 * collections.action.failed: an automated LOCK, UNLOCK or RELEASE whose command failed on the device (each
 * failed attempt: `final` false while it is retried, true when given up), or that was given up without a
 * further attempt (the day ended, the plan no longer asks for it).
 */
export function actionFailedEvent(action: {
  id: number;
  imei1: string;
  kind: string;
  loanRef: string;
  rule: string;
  actionDate: string;
  attempts: number;
  maxAttempts: number;
  final: boolean;
  retryAt: Date | null;
  transactionId: string | null;
  result: string | null;
}): EventRecord {
  return {
    type: 'collections.action.failed',
    imei1: action.imei1,
    data: {
      actionId: action.id,
      imei1: action.imei1,
      action: action.kind,
      loanRef: action.loanRef,
      rule: action.rule,
      actionDate: action.actionDate,
      attempts: action.attempts,
      maxAttempts: action.maxAttempts,
      final: action.final,
      retryAt: action.retryAt ? action.retryAt.toISOString() : null,
      transactionId: action.transactionId,
      result: action.result,
    },
  };
}

/**
 * Where the parts of the system hand their events (WebhookDelivery): `emit` in the transaction of what
 * happened, `wake` once it has committed, and `wants` to skip building events nobody subscribes to.
 */
export interface EventSink {
  emit(db: Kysely<DB>, events: readonly EventRecord[]): Promise<number>;
  wake(): void;
  wants(type: WebhookEvent): Promise<boolean>;
}

/** No webhooks (tools and tests that build a part of the server on its own). */
export const NO_EVENTS: EventSink = {
  emit: async () => 0,
  wake: () => {},
  wants: async () => false,
};
