/**
 * The Batches list: its columns (headings and widths) and the text of each cell of a batch, pure (the
 * Open button is the page's). Times are the browser's local time.
 */
import { type BatchProgress, commandForStatusOf } from '@lendlock/contract';
import type { TextColumn } from '../../components/columns';
import { formatLocalDateTime } from '../../lib/datetime';
import { BATCHES_LABELS as L } from './labels';

export const BATCH_LIST_COLUMNS: readonly TextColumn[] = [
  { title: L.batch, width: 80 },
  { title: L.command, width: 170 },
  { title: L.file, width: 200 },
  { title: L.owner, width: 220 },
  { title: L.total, width: 80 },
  { title: L.found, width: 80 },
  { title: L.notFound, width: 90 },
  { title: L.processed, width: 95 },
  { title: L.phase, width: 110 },
  { title: L.created, width: 165 },
  { title: L.started, width: 165 },
  { title: L.finished, width: 165 },
];

/**
 * What a batch ran: its screen's name (Disable App for `disableappfiles`), 'Device Action REBOOT' for a
 * device action to ALL, else its raw command.
 */
export function batchCommandText(batch: Pick<BatchProgress, 'statusOf' | 'command'>): string {
  if (batch.statusOf === 'deviceaction') return `Device Action ${batch.command}`;
  return commandForStatusOf(batch.statusOf)?.displayName ?? batch.command;
}

export const phaseText = (phase: BatchProgress['phase']): string => L.phases[phase];

const when = (iso: string | null): string => (iso ? formatLocalDateTime(iso) : '');

export function batchCells(batch: BatchProgress & { owner: string }): string[] {
  return [
    String(batch.batchId),
    batchCommandText(batch),
    batch.batchfilename ?? L.noFile,
    batch.owner,
    String(batch.total),
    String(batch.found),
    String(batch.notFound),
    String(batch.processed),
    phaseText(batch.phase),
    when(batch.createdAt),
    when(batch.startedAt),
    when(batch.completedAt),
  ];
}
