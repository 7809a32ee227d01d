/** How a command's status is shown: done, failed, pending (awaiting the device's own ack), or closed. */
import { type CommandStatus, PENDING_STATUSES } from '@lendlock/contract';

export function isPendingStatus(status: string): boolean {
  return (PENDING_STATUSES as readonly string[]).includes(status as CommandStatus);
}

/** The Mantine colour of a status badge or bar. */
export function statusColor(status: string): string {
  if (status === 'EXECUTED') return 'green';
  if (status === 'FAILED') return 'red';
  if (isPendingStatus(status)) return 'yellow';
  return 'gray';
}
