/**
 * What the Collections screen and Device Details share (not screens of the spec): the texts of
 * a per-device hold and of a failed automated action, and the failure text of a collections call. The server's own messages
 * (`COLLECTIONS_MESSAGES`) come from the contract through the calls' answers.
 */
import { type ActionFailure, MESSAGES } from '@lendlock/contract';
import { ApiError, NetworkError } from '../../api/client';

export const HOLD_LABELS = {
  title: 'Collections hold',
  held: 'Held',
  notHeld: 'Not held',
  notHeldText: 'Collections may send this device reminders, a lock, an unlock or a release.',
  heldText: 'Collections send this device nothing until the hold is removed.',
  reason: 'Reason',
  heldBy: 'Held By',
  heldAt: 'Held At',
  imei: 'IMEI',
  retailer: 'Retailer',
  action: 'Action',
  hold: 'Hold device',
  remove: 'Remove hold',
  removeOf: (imei: string) => `Remove the hold of ${imei}`,
  confirmRemove: (imei: string) =>
    `Remove the hold of ${imei}? Collections may then send it reminders, a lock or a release again.`,
  cancel: 'Cancel',
} as const;

export const FAILURE_LABELS = {
  title: 'Failed automated actions',
  intro:
    'Collections commands this device reported failed. Each is retried after 5, 15 and 45 minutes within the day, then given up.',
  action: 'Action',
  day: 'Day',
  status: 'Status',
  result: 'Why',
  nextAttempt: 'Next attempt',
  rule: 'Rule',
} as const;

/** A failed action's status, in Today's Plan and on Device Details: Retrying (n of N), or Failed. */
export function failureText(failure: ActionFailure): string {
  return failure.state === 'RETRYING' ? `Retrying (${failure.attempts} of ${failure.of})` : 'Failed';
}

/** A collections call failed: the server's message, 'Please try after sometime.' offline. */
export function collectionsFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return MESSAGES.cannotFetch;
}
