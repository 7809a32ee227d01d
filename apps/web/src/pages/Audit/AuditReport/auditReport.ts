/**
 * The audit report's sections on the screen: the contract's `auditTables` (the one definition the
 * server's xlsx download uses too), its date-times in the browser's local time.
 */
import { type AuditResponse, type AuditTable, auditTables } from '@lendlock/contract';
import { isPendingStatus } from '../../../components/commandStatus';
import { formatLocalDateTime } from '../../../lib/datetime';

/** The report's four sections in order, as the screen and the print layout show them. */
export function screenTables(audit: Omit<AuditResponse, 'status'>): AuditTable[] {
  return auditTables(audit, formatLocalDateTime);
}

/** Whether a command still awaits the device's acknowledgement (the report then refreshes itself). */
export function hasPendingCommands(commands: readonly { status: string }[] | undefined): boolean {
  return commands?.some((command) => isPendingStatus(command.status)) ?? false;
}
