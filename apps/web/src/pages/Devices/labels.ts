import { COLUMN_LABELS } from '@lendlock/contract';

/** Texts of the device screens (Device Details, Last Command Reports, Device Version Detail). */
export const DEVICE_LABELS = {
  ...COLUMN_LABELS,
  // Device table (spec §2 Last Command Reports columns; Device Details shows the same), beside COLUMN_LABELS
  enrollmentStatus: 'Enrollment Status',
  appVersion: 'App Version',
  appType: 'App Type',
  viewAudit: 'View Audit',
  // Device Version Detail
  noOfDevice: 'No. of Device',
  // Device Details
  searchTitle: 'Search by IMEI',
  searchLabel: 'IMEI',
  batchTitle: 'Batch Upload',
  deviceTitle: 'Device',
  online: 'Online',
  offline: 'Offline',
  lastSeen: 'Last seen',
  stateTitle: 'Current state',
  stateSetting: 'Setting',
  stateDesired: 'Desired',
  stateReported: 'Reported by the device',
  statePending: 'Pending',
  stateInSync: 'In effect',
  stateNotReported: 'The device has not reported its state yet.',
  yes: 'Yes',
  no: 'No',
  pendingTitle: 'Pending commands',
  pendingNone: 'No pending commands.',
  cancel: 'Cancel',
  // Last Command Reports
  uploadImeis: 'Upload a CSV of IMEIs',
} as const;

/** Labels of the device state settings (design.md §4 state model). */
export const STATE_LABELS = {
  locked: 'Locked',
  appsBlocked: 'Apps blocked',
  greyed: 'Disabled app (grade)',
  wallpaper: 'Wallpaper set',
  alarm: 'Alarm active',
  cameraDisabled: 'Camera disabled',
  credit: 'Credit enabled',
  released: 'Released',
} as const;
