/**
 * The columns of the results table (S.No., IMEI, Status, and the Reason of a not found row, which says
 * why) and of the Notify File Preview.
 */
import { type BatchResult, type NotifyRow, notifyMessage, resultReason } from '@lendlock/contract';
import type { VirtualColumn } from '../../components/columns';
import type { BatchKind } from './batchRules';
import { BATCH_LABELS } from './labels';

const status = (r: BatchResult) => r.validate ?? BATCH_LABELS.notProcessed;

const reason: VirtualColumn<BatchResult> = { header: BATCH_LABELS.reason, cell: resultReason };

const IMEI_RESULT_COLUMNS: VirtualColumn<BatchResult>[] = [
  { header: BATCH_LABELS.sno, cell: (r) => r.sno },
  { header: BATCH_LABELS.imei, cell: (r) => r.imei },
  { header: BATCH_LABELS.status, cell: status },
  reason,
];

const NOTIFY_RESULT_COLUMNS: VirtualColumn<BatchResult>[] = [
  { header: BATCH_LABELS.sno, cell: (r) => r.sno },
  { header: BATCH_LABELS.name, cell: (r) => r.name },
  { header: BATCH_LABELS.imei, cell: (r) => r.imei },
  { header: BATCH_LABELS.amount, cell: (r) => r.amount },
  { header: BATCH_LABELS.date, cell: (r) => r.date },
  { header: BATCH_LABELS.template, cell: (r) => r.template },
  { header: BATCH_LABELS.status, cell: status },
  reason,
];

export const resultColumns = (kind: BatchKind) =>
  kind === 'notify' ? NOTIFY_RESULT_COLUMNS : IMEI_RESULT_COLUMNS;

export const NOTIFY_PREVIEW_COLUMNS: VirtualColumn<NotifyRow>[] = [
  { header: BATCH_LABELS.sno, cell: (r) => r.sno },
  { header: BATCH_LABELS.name, cell: (r) => r.name },
  { header: BATCH_LABELS.imei, cell: (r) => r.imei },
  { header: BATCH_LABELS.amount, cell: (r) => r.amount },
  { header: BATCH_LABELS.date, cell: (r) => r.date },
  { header: BATCH_LABELS.template, cell: (r) => r.template },
  // Built for the rows shown, not for every row of the file (NotifyRow).
  { header: BATCH_LABELS.header, cell: (r) => notifyMessage(r.template, r).header },
  { header: BATCH_LABELS.notification, cell: (r) => notifyMessage(r.template, r).message },
];
