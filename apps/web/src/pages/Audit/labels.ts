import { COLUMN_LABELS } from '@lendlock/contract';

/** Texts of the Audit Report By IMEI screen; its messages come from the contract's MESSAGES. */
export const AUDIT_LABELS = {
  ...COLUMN_LABELS,
  imei: 'IMEI',
  search: 'Search',
  print: 'Print Report',
  download: 'Download Report',
  registration: 'Registration Details',
  released: 'Released Details',
  deenroll: 'De-enroll / Re-registration Details',
  commands: 'Executed Commands',
  noRecords: 'No records.',
} as const;
