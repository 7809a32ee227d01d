/**
 * How every screen shows a command's status (the live badge of the command screens, Device Details'
 * pending commands, the Audit Report, the dashboard's bars): one label and one colour per status.
 * QUEUED, SENT and DELIVERED are pending — the device has not acknowledged yet — and
 * all three are yellow; EXECUTED is green, FAILED red, and the closed ones (superseded, cancelled,
 * expired) grey.
 */
import { COMMAND_STATUSES, type CommandStatus, PENDING_STATUSES } from '@lendlock/contract';

/** How the live status of a sent command reads: 'pending' until the device has it. */
const LIVE_STATUS_TEXT: Readonly<Record<CommandStatus, string>> = {
  QUEUED: 'pending',
  SENT: 'pending',
  DELIVERED: 'delivered',
  EXECUTED: 'executed',
  FAILED: 'failed',
  SUPERSEDED: 'superseded',
  CANCELLED: 'cancelled',
  EXPIRED: 'expired',
};

const isCommandStatus = (status: string): status is CommandStatus =>
  (COMMAND_STATUSES as readonly string[]).includes(status);

/** QUEUED, SENT and DELIVERED: the command still awaits the device's own acknowledgement. */
export function isPendingStatus(status: string): boolean {
  return (PENDING_STATUSES as readonly string[]).includes(status);
}

/** The live badge's text: QUEUED and SENT read 'pending', the others their own name in lower case. */
export function statusLabel(status: string): string {
  return isCommandStatus(status) ? LIVE_STATUS_TEXT[status] : status.toLowerCase();
}

/** The Mantine colour of a status badge or bar. */
export function statusColor(status: string): string {
  if (status === 'EXECUTED') return 'green';
  if (status === 'FAILED') return 'red';
  if (isPendingStatus(status)) return 'yellow';
  return 'gray';
}
