/**
 * Command calls: `locknotification.php` for every single action (and the retailer action
 * table), `formattedDevice.php`, `adminlocknotification.php` (device action, SUPERADMIN), and the
 * `/api/v2/` calls that follow a command or an ALL device action after sending it.
 */
import {
  adminLockNotificationResponseSchema,
  batchStatusResponseSchema,
  commandResponseSchema,
  commandStatusResponseSchema,
  type LockNotificationRequest,
  MESSAGES,
} from '@lendlock/contract';
import type { z } from 'zod';
import { type ApiCallOptions, type ApiClient, ApiError, NetworkError } from './client';

export type CommandResponse = z.infer<typeof commandResponseSchema>;
export type DeviceActionResponse = z.infer<typeof adminLockNotificationResponseSchema>;
export type CommandStatusResponse = z.infer<typeof commandStatusResponseSchema>;
export type BatchStatusResponse = z.infer<typeof batchStatusResponseSchema>;

/**
 * The client sends `v2/…` scripts without `.php` (see `scriptPath` in client.ts).
 */
const v2 = (name: string) => `v2/${name}`;

export const commandKeys = {
  all: ['commands'] as const,
  status: (transactionId: string) => [...commandKeys.all, 'status', { transactionId }] as const,
  batch: (batchId: number) => [...commandKeys.all, 'batch', { batchId }] as const,
};

type Signal = Pick<ApiCallOptions<unknown>, 'signal'>;

/**
 * One single command (`user` is the signed-in email; the server records the authenticated identity).
 * `handleAuthorizationFailure: false` leaves an 'Authorization Failed' reply to the caller (the dynamic
 * action table clears all storage itself); `sending` names the command, which /login then reports not
 * sent.
 */
export function sendCommand(
  api: ApiClient,
  request: LockNotificationRequest,
  options: Pick<ApiCallOptions<unknown>, 'handleAuthorizationFailure' | 'sending'> = {},
): Promise<CommandResponse> {
  return api.call('locknotification', {
    ...options,
    body: request,
    parse: (b) => commandResponseSchema.parse(b),
  });
}

/** De-enrolls a formatted device (single only). */
export function sendFormattedDevice(
  api: ApiClient,
  request: { imei: string; user: string },
  options: Pick<ApiCallOptions<unknown>, 'sending'> = {},
): Promise<CommandResponse> {
  return api.call('formattedDevice', {
    ...options,
    body: { ...request, action: 'formatteddevice' },
    parse: (b) => commandResponseSchema.parse(b),
  });
}

/** Device action REBOOT or UPDATE to one IMEI (a `transactionId`) or to ALL (a `batchId`). */
export function sendDeviceAction(
  api: ApiClient,
  request: { imei: string; action: string; user: string },
): Promise<DeviceActionResponse> {
  return api.call('adminlocknotification', {
    body: request,
    parse: (b) => adminLockNotificationResponseSchema.parse(b),
  });
}

export function fetchCommandStatus(
  api: ApiClient,
  transactionId: string,
  options: Signal = {},
): Promise<CommandStatusResponse['command']> {
  return api
    .call(v2('commandStatus'), {
      ...options,
      body: { transactionId },
      parse: (b) => commandStatusResponseSchema.parse(b),
    })
    .then((reply) => reply.command);
}

export function fetchBatchStatus(
  api: ApiClient,
  batchId: number,
  options: Signal = {},
): Promise<BatchStatusResponse> {
  return api.call(v2('batchStatus'), {
    ...options,
    body: { batchId },
    parse: (b) => batchStatusResponseSchema.parse(b),
  });
}

/** A refused command: the server's message as-is; offline, 'Please try after sometime.'. */
export function commandFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return error instanceof Error ? error.message : String(error);
}
