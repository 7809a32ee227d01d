/** Texts of the Dashboard. */
import { NOTIFICATION_SAMPLE_FILE } from '@lendlock/contract';

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

/**
 * The sample files: samplecsv.csv is static (apps/web/public); notificationsamplecsv.csv is dated
 * relative to the operator's day, made in the browser on click (and by the server at its path).
 */
export const SAMPLE_FILES = {
  imei: 'samplecsv.csv',
  notification: NOTIFICATION_SAMPLE_FILE,
} as const;
