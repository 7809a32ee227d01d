/** Texts of the Dashboard. */
export const DASHBOARD_LABELS = {
  totalDevices: 'Total Devices',
  deenrolled: 'De-Enrolled Devices (re-registration required)',
  todaysRegistration: "Today's Registration",
  sampleCsv: 'Download Sample CSV',
  notificationSampleCsv: 'Download Notification Sample CSV',
  refresh: 'Refresh Data',
  registrationsPerDay: 'Registrations per day (last 30 days)',
  commandsByStatus: 'Commands by status (last 30 days)',
  devicesOnline: 'Devices online',
  onlineOf: (online: number, total: number) => `${online} of ${total} online`,
  noCommands: 'No commands in the last 30 days.',
} as const;

/** The static sample files (apps/web/public), served beside the console. */
export const SAMPLE_FILES = {
  imei: 'samplecsv.csv',
  notification: 'notificationsamplecsv.csv',
} as const;
