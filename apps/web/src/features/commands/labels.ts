/**
 * Field labels, headings and form messages of the command screens that the spec does not word. The
 * spec's own texts (the IMEI hint, the release confirmation, 'Please select a template', the device
 * action messages and every success alert) live in the contract; tests import both from there and here.
 */
export const COMMAND_LABELS = {
  imei: 'IMEI Number',
  imeiPlaceholder: '15 digit IMEI number',
  submit: 'Submit',
  single: 'Single',
  grade: 'Grade',
  selectGrade: 'Select Grade',
  customerName: 'Customer Name',
  template: 'Template',
  selectTemplate: 'Select Template',
  amount: 'Amount',
  date: 'Date',
  preview: 'Notification Preview',
  previewHeader: 'Header',
  previewMessage: 'Notification',
  cancel: 'Cancel',
  sendNotification: 'Send Notification',
  liveStatus: 'Live status',
  sentTo: (displayName: string, imei: string) => `${displayName} → ${imei}`,
  /** A command /login reports not sent (MESSAGES.notSent) when the session ended as it was sent. */
  commandToImei: (displayName: string, imei: string) => `${displayName} to IMEI ${imei}`,
  retailerTable: 'Retailer Device Actions',
  retailerTableHint: (phone: string) => `Commands for the devices of retailer ${phone}.`,
  sno: 'S.No.',
  action: 'Action',
  status: 'Status',
  addRow: 'Add row',
  rowImei: (index: number) => `IMEI of row ${index}`,
  rowAction: (label: string, index: number) => `${label} row ${index}`,
} as const;

/** The notify and graded single forms' own messages (our wording for the rules these forms check). */
export const COMMAND_FORM_MESSAGES = {
  gradeRequired: 'Please select a grade.',
  nameRequired: 'Please enter the customer name.',
  amountRequired: 'Please enter the amount.',
  amountInvalid: 'Enter an amount with up to 2 decimal places.',
  amountPositive: 'The amount must be more than zero.',
  dateRequired: 'Please choose a date.',
  preDueDate: 'For Pre Due the date must be today or later.',
  postDueDate: 'For Post Due the date must be today or earlier.',
} as const;
