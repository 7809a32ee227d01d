import { COLUMN_LABELS } from '@lendlock/contract';

/** Texts of the device screens (Device Details, Last Command Reports, Device Version Detail). */
export const DEVICE_LABELS = {
  ...COLUMN_LABELS,
  // Device table (Last Command Reports columns; Device Details shows the same), beside COLUMN_LABELS
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
  stateOnRegistration: 'Re-applied when it registers again',
  stateLastReported: 'Last reported by the device',
  stateDeenrolled:
    'The phone was formatted: it has no agent, and what it last reported no longer holds. Its desired state is applied again when it registers again.',
  yes: 'Yes',
  no: 'No',
  pendingTitle: 'Pending commands',
  pendingNone: 'No pending commands.',
  cancel: 'Cancel',
  confirmCancel: (command: string, imei: string) =>
    `Cancel the pending ${command} command for IMEI ${imei}? It will not be sent to the device.`,
  // Device Details: the device's identity (its device key) and its re-registration requests
  identityTitle: 'Device identity',
  keyAttested: (level: string) => `Device key: attested (${level})`,
  keyNotAttested: 'Device key: not attested',
  keyNone: 'No device key (an agent from before device keys)',
  keyEnrolledAt: (when: string) => `Key enrolled ${when}`,
  attestationPassed: (when: string) => `Attestation passed every check (${when})`,
  attestationFailed: (when: string) => `Attestation failed (${when}):`,
  requestsTitle: 'Registration requests',
  requestsNone: 'No registration requests.',
  requestedAt: 'Requested',
  requestAddress: 'From address',
  requestClaims: 'Claims',
  requestNewKey: 'New key',
  requestAttempts: 'Attempts',
  requestDecision: 'Decision',
  claimImei2: (imei2: string) => `IMEI 2: ${imei2}`,
  claimRetailer: (phone: string) => `Retailer phone: ${phone}`,
  decidedBy: (who: string, when: string) => `by ${who} at ${when}`,
  approvedUntil: (when: string) => `may register until ${when}`,
  usedAt: (when: string) => `registered at ${when}`,
  lastAttemptAt: (when: string) => `last ${when}`,
  approve: 'Approve',
  reject: 'Reject',
  approveRequestOf: (when: string) => `Approve the registration request of ${when}`,
  rejectRequestOf: (when: string) => `Reject the registration request of ${when}`,
  confirmApprove: (imei: string) =>
    `Approve a new registration of ${imei}? The phone that registers next with the claimed key will take over this device.`,
  confirmReject: (imei: string) => `Reject this registration request for ${imei}?`,
  // Last Command Reports
  uploadImeis: 'Upload a CSV of IMEIs',
  // The uploaded IMEIs no device has (Device Details batch, Last Command Reports), listed with why
  notFoundTitle: (count: number) =>
    `Not found: ${count.toLocaleString('en-US')} ${count === 1 ? 'IMEI' : 'IMEIs'}`,
  notFoundReason: 'Reason',
} as const;

/** Labels of the device state settings (the contract's device state model). */
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
