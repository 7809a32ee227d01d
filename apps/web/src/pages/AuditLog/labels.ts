/** Texts of the SUPERADMIN's Audit Log screen; its messages come from the contract's MESSAGES. */
export const AUDIT_LOG_LABELS = {
  formTitle: 'Search the audit log',
  imei: 'IMEI',
  user: 'User (email)',
  action: 'Action starts with',
  actionPlaceholder: 'e.g. login, user., key., command.LOCK',
  from: 'From',
  to: 'To',
  /** The browser's time zone, whose whole days From and To are and whose times the rows show. */
  datesInZone: (zone: string) => `From and To are whole days in ${zone}; times are shown in ${zone}.`,
  /** When the browser cannot tell its zone: the server answers in its REPORT_TIMEZONE. */
  serverZone: "the server's time zone",
  search: 'Search',
  clear: 'Clear',
  export: 'Export',
  results: 'Audit log',
  noRows: 'No records.',
  /** A count the server capped (it counts at most 10,000 rows) is 'more than' it. */
  rows: (count: number, capped = false) =>
    `${capped ? 'more than ' : ''}${count.toLocaleString('en-US')} ${count === 1 && !capped ? 'row' : 'rows'}`,
  range: (first: number, last: number, total: number, capped = false) =>
    `Rows ${first.toLocaleString('en-US')}–${last.toLocaleString('en-US')} of ${capped ? 'more than ' : ''}${total.toLocaleString('en-US')}`,
  // Columns
  when: 'When',
  who: 'Who',
  what: 'What',
  target: 'Target',
  address: 'Address',
  result: 'Result',
  details: 'Details',
} as const;
