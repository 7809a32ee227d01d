import { COLUMN_LABELS } from '@lendlock/contract';

/** Texts of the Reports / Bulk Upload History Details screen; its messages come from MESSAGES. */
export const REPORT_LABELS = {
  ...COLUMN_LABELS,
  formTitle: 'Download reports',
  startDate: 'StartDate',
  endDate: 'EndDate',
  filter: 'Registration filter',
  selectFilter: 'Select filter',
  submit: 'Submit',
  cancel: 'Cancel',
  download: 'Download',
  view: 'View',
  // Result tables
  registrations: 'Registrations',
  deenroll: 'De-enrollment/Re-registery Records',
  bulkHistory: 'Bulk Upload History',
  commands: 'Executed Commands',
  rows: (count: number) => `${count.toLocaleString('en-US')} ${count === 1 ? 'row' : 'rows'}`,
  loading: (loaded: number, total: number) =>
    `Loading… ${loaded.toLocaleString('en-US')} of ${total.toLocaleString('en-US')} rows`,
  noRows: 'No records.',
  // Columns beside COLUMN_LABELS
  viewAudit: 'View Audit',
} as const;

/** The command interfaces (Single, API, Bulk), shown beside the letter. */
export const INTERFACE_NAMES: Readonly<Record<string, string>> = {
  S: 'Single',
  A: 'API',
  B: 'Bulk',
};
