/**
 * Headings, fields and buttons of the Collections screen (not a screen of the spec). The
 * server's messages (saved, stopped, refused…) are the contract's COLLECTIONS_MESSAGES, shown as the
 * server sends them.
 */
import type { CollectionAction, CollectionSkip, ReleaseState } from '@lendlock/contract';

export const COLLECTIONS_LABELS = {
  tabs: { plan: "Today's Plan", policy: 'Policy', releases: 'Release approvals', holds: 'Holds' },

  // Kill switch
  killSwitch: 'Kill switch',
  running: 'Collections are running',
  stopped: 'Collections are stopped',
  runningText: 'Automated reminders, locks, unlocks and releases are sent as the policy says.',
  stoppedText:
    'No automated reminder or lock is sent until a SUPERADMIN resumes. Unlocks on payment and approved releases still go.',
  stoppedBy: (by: string, at: string) => `Stopped by ${by} at ${at}.`,
  resumedBy: (by: string, at: string) => `Last changed by ${by} at ${at}.`,
  stop: 'Stop collections',
  resume: 'Resume collections',
  stopTitle: 'Stop automated collections?',
  stopText:
    'Every automated reminder and lock stops at once, including those already queued (they are cancelled). Payments are still recorded, and a payment still unlocks its device and releases a paid-off one.',
  resumeTitle: 'Resume automated collections?',
  resumeText: 'The policy runs again from its next check: reminders, locks, unlocks and releases are sent.',
  resumeSuperadminOnly: 'Only a SUPERADMIN can resume collections.',
  retailerCannotStop: 'A retailer’s user cannot stop collections: hold devices instead.',
  reason: 'Reason',
  cancel: 'Cancel',
  confirmStop: 'Stop collections',
  confirmResume: 'Resume collections',
  cancelledQueued: (n: number) => `${n} queued automated command${n === 1 ? '' : 's'} cancelled.`,

  // Plan
  planTitle: (date: string, zone: string) => `Plan for ${date} (${zone})`,
  policyOff: 'The policy is off: nothing is sent until a SUPERADMIN switches it on.',
  nothingRuns:
    'The kill switch is on: no reminder or lock will go out. Unlocks on payment and releases still do.',
  version: (v: number | null) =>
    v === null ? 'Unsaved policy' : v === 0 ? 'Default policy (never saved)' : `Version ${v}`,
  countsCaption: 'Actions by kind',
  skippedCaption: 'Not taken, by reason',
  action: 'Action',
  count: 'Count',
  skippedReason: 'Reason',
  noSkips: 'Nothing skipped.',
  show: 'Show',
  all: 'All',
  skippedOnly: 'Skipped',
  items: 'Devices in the plan',
  noItems: 'No device in this selection.',
  loadMore: 'Load more',
  shown: (shown: number, more: boolean) => `${shown} shown${more ? ', more to load' : ''}`,
  downloadCsv: 'Download CSV',
  imei: 'IMEI',
  loan: 'Loan',
  customer: 'Customer',
  retailer: 'Retailer',
  skipped: 'Skipped',
  status: 'Status',
  sent: 'Done',
  toSend: 'To send',
  runsAt: (time: string, zone: string) =>
    `Reminders and locks go out at ${time} (${zone}); unlocks and releases on payment at any hour.`,
  rule: 'Rule',
  dueDate: 'Due Date',
  amount: 'Amount',
  daysOverdue: 'Days Overdue',

  // Runs
  runs: 'Recent runs',
  noRuns: 'No daily run yet.',
  runDate: 'Day',
  state: 'State',
  startedAt: 'Started',
  finishedAt: 'Finished',
  processed: 'Loans',
  actionsSent: 'Actions',
  resumes: 'Resumed',

  // Policy
  currentPolicy: 'Policy',
  readOnly: 'Only a SUPERADMIN can change the policy.',
  changedBy: (version: number, by: string | null, at: string) =>
    by ? `Version ${version}, saved by ${by} at ${at}.` : 'The default policy: never saved.',
  remindersTitle: 'Reminders',
  lockTitle: 'Lock, unlock and release',
  scheduleTitle: 'Time zone and quiet hours',
  exclusionsTitle: 'Exclusions',
  fields: {
    enabled: 'Collections policy on',
    timeZone: 'Time zone',
    preDaysBefore: 'Pre reminder: days before the due date (0 = none)',
    due: 'Due reminder on the due date',
    postEveryDays: 'Post reminder: every N days after (0 = none)',
    lockEnabled: 'Lock overdue devices',
    lockAfterDaysOverdue: 'Lock after days overdue',
    pauseMinAmount: 'A payment suspends the lock from this amount (empty = no amount)',
    pauseMinShare: '…or from this % of what is overdue (empty = no share)',
    unlockOnPayment: 'Unlock when a payment clears the arrears',
    release: 'Release at the last instalment',
    quietEnabled: 'Quiet hours',
    quietStart: 'Quiet from',
    quietEnd: 'Quiet until',
    excludedImeis: 'Excluded IMEIs (one per line)',
    excludedRetailers: 'Excluded retailers: phone numbers (one per line)',
  },
  releaseOptions: { AUTO: 'Automatically', APPROVAL: 'After an operator approves', OFF: 'Never' },
  wholeNumber: (min: number, max: number) => `Enter a whole number from ${min} to ${max}.`,
  lockPauseNote:
    'Payments of the last 24 hours (by when the customer paid) that reach either minimum put the day’s lock off; with both empty, any payment does.',
  entryProblem: (message: string, value: string) => `${message} (${value})`,
  fixErrors: 'Please correct the highlighted fields.',
  save: 'Save new version',
  reset: 'Undo changes',
  noChanges: 'No change to save.',
  confirmSaveTitle: 'Save a new policy version?',
  confirmSaveText: 'These changes take effect for the next actions collections take:',
  confirmSave: (version: number) => `Save version ${version}`,

  // Dry run
  dryRun: 'Dry run',
  dryRunText:
    'What the policy in the form would do on a day, without sending anything: counts per action and the devices.',
  dryRunDate: 'Day',
  runDryRun: 'Dry run',
  dryRunInvalid: 'Correct the policy before a dry run.',

  // History
  history: 'Version history',
  noHistory: 'No version saved yet.',
  versionCol: 'Version',
  byCol: 'Changed By',
  atCol: 'Changed At',
  changesCol: 'What changed',
  firstVersion: 'First version',

  // Releases
  releasesTitle: 'Release approvals',
  releaseMode: (mode: string) => `Releases at the last instalment: ${mode}.`,
  releaseModeNote: 'The queue fills only while the policy releases after an operator approves.',
  noReleases: 'Nothing in this list.',
  states: {
    AWAITING_APPROVAL: 'Awaiting approval',
    APPROVED: 'Approved',
    REJECTED: 'Rejected',
    REFUSED: 'Refused (not sent)',
  } satisfies Record<ReleaseState, string>,
  paidAt: 'Paid At',
  queuedAt: 'Queued At',
  decided: 'Decided',
  approve: 'Approve',
  reject: 'Reject',
  approveOf: (imei: string) => `Approve the release of ${imei}`,
  rejectOf: (imei: string) => `Reject the release of ${imei}`,
  confirmApprove: (imei: string, customer: string) =>
    `Release ${imei} (${customer})? The device leaves the lender's control for good.`,
  confirmReject: (imei: string, customer: string) =>
    `Reject the release of ${imei} (${customer})? It stays in the lender's control.`,

  // Holds
  holdsTitle: 'Held devices',
  addHold: 'Hold a device',
  noHolds: 'No device is held.',
} as const;

export const ACTION_LABELS: Record<CollectionAction, string> = {
  PRE: 'Pre reminder',
  DUE: 'Due reminder',
  POST: 'Post reminder',
  LOCK: 'Lock',
  UNLOCK: 'Unlock',
  RELEASE: 'Release',
};

export const SKIP_LABELS: Record<CollectionSkip, string> = {
  held: 'Device held',
  excluded: 'Excluded by the policy',
  recentPayment: 'Paid the minimum in the last 24 hours',
  promiseToPay: 'Promise to pay',
  killSwitch: 'Kill switch on',
  disabled: 'Policy off',
  released: 'Released or not enrolled',
  alreadyLocked: 'Already locked',
  operatorUnlock: 'Unlocked by an operator',
};
