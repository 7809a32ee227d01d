/** Texts of the Batches screen; its messages come from the contract's MESSAGES. */
export const BATCHES_LABELS = {
  intro:
    'Every batch you may see, newest first: your own, and as an ADMIN or SUPERADMIN those of lower levels. Open one to read or download its results.',
  listLabel: 'Batches',
  noBatches: 'No batches yet.',
  loadingMore: 'Loading more batches…',
  shown: (count: number, more: boolean) =>
    `${count.toLocaleString('en-US')} ${count === 1 ? 'batch' : 'batches'}${more ? ' (scroll for more)' : ''}`,
  open: 'Open',
  openBatch: (id: number) => `Open batch ${id}`,
  back: 'All batches',
  detailTitle: (id: number) => `Batch ${id}`,
  // Columns
  batch: 'Batch',
  command: 'Command',
  file: 'File',
  owner: 'Owner',
  total: 'Total',
  found: 'Found',
  notFound: 'Not Found',
  processed: 'Processed',
  phase: 'Phase',
  created: 'Created',
  started: 'Started',
  finished: 'Finished',
  noFile: '(no file)',
  processingTime: 'Processing time',
  phases: {
    running: 'Running',
    paused: 'Paused',
    interrupted: 'Interrupted',
    complete: 'Complete',
    cancelled: 'Cancelled',
  },
} as const;
