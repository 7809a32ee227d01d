/** Texts of the Reports / Bulk Upload History Details screen (spec §2); its messages come from MESSAGES. */
export const REPORT_LABELS = {
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
  // Columns
  sno: 'S.No.',
  action: 'Action',
  viewAudit: 'View Audit',
  imei1: 'IMEI 1',
  imei2: 'IMEI 2',
  matchStatus: 'Match Status',
  registrationStatus: 'Registration Status',
  dateAndTime: 'Date and Time',
  manufacturer: 'Manufacturer',
  brand: 'Brand',
  model: 'Model',
  lastCommand: 'Last Command',
  createdAt: 'Created At',
  file: 'File',
  isComplete: 'Is Complete',
  lastImei: 'Last IMEI',
  remarks: 'Remarks',
  transactionId: 'Transaction Id',
  interface: 'Interface',
  command: 'Command',
  status: 'Status',
  user: 'User',
  commandType: 'Command Type',
  // Export progress
  exporting: (fileName: string) => `Exporting ${fileName}`,
  received: (bytes: string) => `${bytes} received`,
  ofRows: (rows: number) => `${rows.toLocaleString('en-US')} ${rows === 1 ? 'row' : 'rows'}`,
} as const;

/** Spec §9 command interfaces, shown beside the letter. */
export const INTERFACE_NAMES: Readonly<Record<string, string>> = {
  S: 'Single',
  A: 'API',
  B: 'Bulk',
};
