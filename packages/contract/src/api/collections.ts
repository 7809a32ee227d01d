/**
 * Collections on autopilot (docs/features.md § Collections on autopilot): the lender's one policy, versioned;
 * its plan for a day (the dry run and Today's Plan); the kill switch; per-device holds; the release approval
 * queue and the daily runs. All under `/api/v2/collections`, for ADMIN and SUPERADMIN with a session or a key
 * (who may change what is in `COLLECTIONS_MESSAGES` and the routes' rows in docs/operations.md).
 */
import { z } from 'zod';
import { isoDaySchema, isTimeZone } from '../dates';
import { isAmountText } from '../loans';

export const COLLECTIONS_MESSAGES = {
  policySaved: (version: number) => `Collections policy saved as version ${version}.`,
  policyUnchanged: 'The policy is the same as the current version: nothing was saved.',
  superadminOnly: 'Only a SUPERADMIN can change the collections policy.',
  policyRetailer:
    'A retailer’s user cannot change the lender’s collections policy: it governs every retailer’s loans. Hold devices instead.',
  killSwitchOn:
    'Collections stopped: no automated reminder or lock is sent. Unlocks on payment and approved releases still go.',
  killSwitchOff: 'Collections resumed.',
  killSwitchOffSuperadmin: 'Only a SUPERADMIN can resume collections.',
  killSwitchRetailer:
    'A retailer’s user cannot stop or resume the lender’s collections: hold devices instead.',
  killSwitchSame: (on: boolean) =>
    on ? 'Collections are already stopped.' : 'Collections are already running.',
  holdSet: 'Device held: collections will send it nothing until the hold is removed.',
  holdRemoved: 'Hold removed.',
  holdNotFound: 'This device is not held.',
  deviceNotFound: 'No registered device with this IMEI.',
  reasonRequired: 'Please give a reason.',
  releaseApproved: 'Release approved: the device is being released.',
  releaseRejected: 'Release rejected.',
  releaseNotFound: 'No such release awaiting approval.',
  releaseDecided: 'This release has already been decided.',
  releaseRefused: (refusal: string) => `The release could not be sent: the device is ${refusal}.`,
  releaseNotPaid:
    'The loan is no longer paid (a payment was reversed): its release cannot be approved. Reject it instead.',
  badTimeZone: 'Unknown time zone.',
  badTime: 'Expected a time as HH:MM (00:00 to 23:59).',
  quietHoursEmpty: 'Quiet hours must start and end at different times.',
  badImei: 'Each excluded IMEI must be 15 digits.',
  badRetailer: 'Each excluded retailer must be a phone number of 10 digits.',
  tooManyExclusions: 'At most 10,000 exclusions of each kind.',
  badCursor: 'Invalid cursor.',
  badMinAmount: 'The minimum payment must be an amount greater than 0, e.g. 500 or 499.50.',
  badMinShare: 'The minimum share must be a whole percentage from 1 to 100.',
  /** The audit report and reports show this beside an automated command (interface 'C'). */
  stopped: 'collections stopped',
} as const;

/** What the engine does to a device on a day. */
export const COLLECTION_ACTIONS = ['PRE', 'DUE', 'POST', 'LOCK', 'UNLOCK', 'RELEASE'] as const;
export type CollectionAction = (typeof COLLECTION_ACTIONS)[number];
export const collectionActionSchema = z.enum(COLLECTION_ACTIONS);

/**
 * Relief: the actions that lift what collections imposed. The kill switch (like quiet hours) stops the
 * others — reminders, locks, restrictions — and never these: a customer who pays is unlocked, a paid loan
 * released (automatically, or by an operator's approval), whether collections are stopped or not.
 */
export const COLLECTION_RELIEF = ['UNLOCK', 'RELEASE'] as const satisfies readonly CollectionAction[];

/**
 * The retry rule of a failed automated action (docs/features.md § Collections on autopilot): a LOCK, UNLOCK
 * or RELEASE whose command the device reports FAILED is sent again after 5, then 15, then 45 minutes — at
 * most `maxAttempts` attempts in all — within the lender's day it was taken, and only while the plan still
 * asks for it (a lock whose loan was paid meanwhile is not retried). A lock also waits out the quiet hours
 * and the kill switch; relief does not. Each failed attempt is counted, announced and shown.
 */
export const COLLECTIONS_RETRY = {
  actions: ['LOCK', 'UNLOCK', 'RELEASE'] as const satisfies readonly CollectionAction[],
  backoffMinutes: [5, 15, 45] as const,
  maxAttempts: 4,
} as const;

/**
 * A recorded action whose command failed: RETRYING (an attempt failed; another goes out, or is out) or
 * FAILED (given up: every attempt failed, the lender's day ended, or the plan no longer asks for it).
 */
export const ACTION_FAILURE_STATES = ['RETRYING', 'FAILED'] as const;
export const actionFailureSchema = z.object({
  state: z.enum(ACTION_FAILURE_STATES),
  /** Attempts sent so far (the first one included), of at most `of`. */
  attempts: z.number().int(),
  of: z.number().int(),
});
export type ActionFailure = z.infer<typeof actionFailureSchema>;

/**
 * Why an action the policy asks for is not taken (the dry run counts them; the daily run records them):
 * - held: a per-device hold; excluded: the policy excludes its IMEI or retailer;
 * - recentPayment: a LOCK of a loan whose payments paid (by their paid_at) in the 24 hours before the
 *   engine's clock, reversed ones aside, cover the policy's minimum (`lockPause`);
 * - promiseToPay: a LOCK while the loan's promise-to-pay date is today or later;
 * - killSwitch: a reminder or lock, while the kill switch is on (relief still goes: COLLECTION_RELIEF);
 *   disabled: everything, while the policy is off;
 * - released: the device is released, de-enrolled or not registered;
 * - alreadyLocked: a LOCK of a device that is locked already (by collections or an operator);
 * - operatorUnlock: a LOCK of a device an operator unlocked, until an instalment due on or after the day
 *   of the unlock is overdue as long as the policy's lock rule asks (an operator's decision stands).
 */
export const COLLECTION_SKIPS = [
  'held',
  'excluded',
  'recentPayment',
  'promiseToPay',
  'killSwitch',
  'disabled',
  'released',
  'alreadyLocked',
  'operatorUnlock',
] as const;
export type CollectionSkip = (typeof COLLECTION_SKIPS)[number];
export const collectionSkipSchema = z.enum(COLLECTION_SKIPS);

/** `HH:MM`, 00:00–23:59. */
export const clockTimeSchema = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, COLLECTIONS_MESSAGES.badTime);

/**
 * What the payments of the last 24 hours must cover to suspend a lock (`recentPayment`): `minAmount`
 * (decimal text, read in each loan's currency: "500" is INR 500.00 on an INR loan) or `minSharePercent`
 * of what was overdue before them (the arrears plus those payments); either one suffices. Both null: any
 * payment does (as the engine first did). The default: a quarter of what was overdue.
 */
export const lockPauseSchema = z.object({
  minAmount: z.string().trim().refine(isAmountText, COLLECTIONS_MESSAGES.badMinAmount).nullable(),
  minSharePercent: z
    .number({ error: COLLECTIONS_MESSAGES.badMinShare })
    .int(COLLECTIONS_MESSAGES.badMinShare)
    .min(1, COLLECTIONS_MESSAGES.badMinShare)
    .max(100, COLLECTIONS_MESSAGES.badMinShare)
    .nullable(),
});
export type LockPause = z.infer<typeof lockPauseSchema>;

/** A policy saved before the minimum existed reads with this one. */
export const DEFAULT_LOCK_PAUSE: LockPause = { minAmount: null, minSharePercent: 25 };

export const collectionsPolicySchema = z.object({
  /** Off: the plan is computed (the dry run) but the daily run and the payment watcher send nothing. */
  enabled: z.boolean(),
  /** The lender's IANA zone: it decides "today", the due dates and the quiet hours. */
  timeZone: z.string().trim().min(1).max(64).refine(isTimeZone, COLLECTIONS_MESSAGES.badTimeZone),
  reminders: z.object({
    /** Pre reminder this many days before a due date; 0: none. */
    preDaysBefore: z.number().int().min(0).max(30),
    /** Due reminder on the due date. */
    due: z.boolean(),
    /** Post reminder every this many days after a missed due date (day 1, 1+M, 1+2M…); 0: none. */
    postEveryDays: z.number().int().min(0).max(30),
  }),
  /** LOCK once the oldest unpaid instalment is this many days overdue; null: never lock. */
  lockAfterDaysOverdue: z.number().int().min(1).max(365).nullable(),
  /** What a recent payment must cover to suspend a LOCK (a policy saved without it: DEFAULT_LOCK_PAUSE). */
  lockPause: lockPauseSchema.default(DEFAULT_LOCK_PAUSE),
  /** UNLOCK a device collections locked once a payment clears its arrears (within 60 s). */
  unlockOnPayment: z.boolean(),
  /** When the last instalment is paid: RELEASE at once, queue it for approval, or do nothing. */
  release: z.enum(['AUTO', 'APPROVAL', 'OFF']),
  /**
   * Local times in `timeZone` when no reminder or lock is sent (unlocks and releases are): the daily run
   * starts at `end`. A window may cross midnight (22:00–08:00). null: none; the run starts at 00:00.
   */
  quietHours: z
    .object({ start: clockTimeSchema, end: clockTimeSchema })
    .refine((q) => q.start !== q.end, COLLECTIONS_MESSAGES.quietHoursEmpty)
    .nullable(),
  excludedImeis: z
    .array(
      z
        .string()
        .trim()
        .regex(/^\d{15}$/, COLLECTIONS_MESSAGES.badImei),
    )
    .max(10000, COLLECTIONS_MESSAGES.tooManyExclusions),
  /** Retailers' phone numbers (a device's retailer, as User Management names a retailer). */
  excludedRetailers: z
    .array(
      z
        .string()
        .trim()
        .regex(/^\d{10}$/, COLLECTIONS_MESSAGES.badRetailer),
    )
    .max(10000, COLLECTIONS_MESSAGES.tooManyExclusions),
});
export type CollectionsPolicy = z.infer<typeof collectionsPolicySchema>;

/** Version 0, before any SUPERADMIN saved one: off, so nothing runs until someone decides. */
export const DEFAULT_COLLECTIONS_POLICY: CollectionsPolicy = {
  enabled: false,
  timeZone: 'Asia/Kolkata',
  reminders: { preDaysBefore: 3, due: true, postEveryDays: 3 },
  lockAfterDaysOverdue: 5,
  lockPause: DEFAULT_LOCK_PAUSE,
  unlockOnPayment: true,
  release: 'APPROVAL',
  quietHours: { start: '21:00', end: '09:00' },
  excludedImeis: [],
  excludedRetailers: [],
};

// ---- Policy and its versions ----

export const collectionsPolicyVersionSchema = z.object({
  /** 0: the default, never saved. */
  version: z.number().int(),
  policy: collectionsPolicySchema,
  /** The user's email or the key's label; null for version 0. */
  changedBy: z.string().nullable(),
  changedAt: z.string().nullable(),
});
export type CollectionsPolicyVersion = z.infer<typeof collectionsPolicyVersionSchema>;

/** `GET /api/v2/collections/policy`. */
export const getCollectionsPolicyResponseSchema = z.object({
  status: z.literal('success'),
  ...collectionsPolicyVersionSchema.shape,
});

/** `PUT /api/v2/collections/policy` (SUPERADMIN): the whole policy; a new version when it differs. */
export const putCollectionsPolicyRequestSchema = z.object({ policy: collectionsPolicySchema });
export const putCollectionsPolicyResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  ...collectionsPolicyVersionSchema.shape,
});

/** One changed field between a version and the one before: a dotted path, e.g. `reminders.preDaysBefore`. */
export const policyChangeSchema = z.object({
  field: z.string(),
  from: z.unknown(),
  to: z.unknown(),
});
export type PolicyChange = z.infer<typeof policyChangeSchema>;

/** `GET /api/v2/collections/policy/versions`: newest first, each with its changes from the one before. */
export const listPolicyVersionsResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(collectionsPolicyVersionSchema.extend({ changes: z.array(policyChangeSchema) })),
});

// ---- The plan (dry run and Today's Plan) ----

export const planItemSchema = z.object({
  loanId: z.number(),
  loanRef: z.string(),
  /** The loan's IMEI (the device's IMEI 1 or 2). */
  imei: z.string(),
  customerName: z.string(),
  retailerPhone: z.string().nullable(),
  action: collectionActionSchema,
  /** Why it is not taken; null: it is (or would be) sent. */
  skipped: collectionSkipSchema.nullable(),
  /** The rule, as reports and the audit report show it: `collections v3: lock after 5 days overdue`. */
  rule: z.string(),
  /** The instalment the action is about (the oldest unpaid), YYYY-MM-DD; null for RELEASE. */
  dueDate: z.string().nullable(),
  /** Its unpaid amount, as decimal text ("1499.50"), and the loan's currency. */
  amount: z.string().nullable(),
  currency: z.string(),
  daysOverdue: z.number().int(),
  /**
   * Already done that day: the daily run (or the payment watcher) recorded this action, sent or skipped
   * as `skipped` says; the rest of the item is what the plan computes now.
   */
  done: z.boolean(),
  /** Done, but its command failed on the device: being retried, or given up (COLLECTIONS_RETRY). */
  failure: actionFailureSchema.nullable(),
});
export type PlanItem = z.infer<typeof planItemSchema>;

export const planCountsSchema = z.object({
  PRE: z.number().int(),
  DUE: z.number().int(),
  POST: z.number().int(),
  LOCK: z.number().int(),
  UNLOCK: z.number().int(),
  RELEASE: z.number().int(),
  /** Actions the policy asks for that are not taken, by reason (every reason present, 0 or more). */
  skipped: z.object({
    held: z.number().int(),
    excluded: z.number().int(),
    recentPayment: z.number().int(),
    promiseToPay: z.number().int(),
    killSwitch: z.number().int(),
    disabled: z.number().int(),
    released: z.number().int(),
    alreadyLocked: z.number().int(),
    operatorUnlock: z.number().int(),
  } satisfies Record<CollectionSkip, z.ZodNumber>),
});
export type PlanCounts = z.infer<typeof planCountsSchema>;

/** Which items a page or a download holds: one action, skipped ones only, or all. */
export const planFilterSchema = z.union([collectionActionSchema, z.literal('SKIPPED'), z.literal('ALL')]);

/**
 * `POST /api/v2/collections/plan`: what the policy (the saved one, or `policy` to dry-run an unsaved one)
 * does on `date` (default: today in the policy's zone). Items come in loan id order, `limit` per page;
 * `cursor` from the previous page's answer gives the next (null: the last page).
 */
export const planRequestSchema = z.object({
  date: isoDaySchema.optional(),
  policy: collectionsPolicySchema.optional(),
  filter: planFilterSchema.optional().default('ALL'),
  limit: z.number().int().min(1).max(1000).optional().default(100),
  cursor: z.string().max(40).optional(),
});
export type PlanRequest = z.input<typeof planRequestSchema>;

export const planResponseSchema = z.object({
  status: z.literal('success'),
  date: z.string(),
  timeZone: z.string(),
  /** The version planned with; null for an unsaved policy. */
  version: z.number().int().nullable(),
  killSwitch: z.boolean(),
  /**
   * When the day's reminders and locks go out: `HH:MM` in the zone, the end of the quiet hours (the
   * daily run starts then; unlocks and releases on payment are sent at any hour).
   */
  runsAt: z.string(),
  counts: planCountsSchema,
  items: z.array(planItemSchema),
  cursor: z.string().nullable(),
});
export type PlanResponse = z.infer<typeof planResponseSchema>;

/**
 * `POST /api/v2/collections/plan/export`: every item of the plan as CSV (UTF-8 with the BOM), the body as
 * for the plan without paging. File name `collections-plan_{date}.csv`.
 */
export const planExportRequestSchema = z.object({
  date: isoDaySchema.optional(),
  policy: collectionsPolicySchema.optional(),
  filter: planFilterSchema.optional().default('ALL'),
});
export const PLAN_CSV_HEADERS = [
  'IMEI',
  'Loan',
  'Customer',
  'Retailer',
  'Action',
  'Skipped',
  'Rule',
  'Due Date',
  'Amount',
  'Currency',
  'Days Overdue',
] as const;
export const planFileName = (date: string) => `collections-plan_${date}.csv`;

// ---- Kill switch ----

export const killSwitchSchema = z.object({
  on: z.boolean(),
  reason: z.string().nullable(),
  changedBy: z.string().nullable(),
  changedAt: z.string().nullable(),
});
export type KillSwitch = z.infer<typeof killSwitchSchema>;

/** `GET /api/v2/collections/kill-switch`. */
export const getKillSwitchResponseSchema = z.object({
  status: z.literal('success'),
  ...killSwitchSchema.shape,
});

/**
 * `PUT /api/v2/collections/kill-switch`: an ADMIN or SUPERADMIN (not a retailer's) turns it on — stopping
 * is always allowed — and only a SUPERADMIN turns it off. Turning it on cancels the automated commands
 * still QUEUED ('collections stopped').
 */
export const putKillSwitchRequestSchema = z.object({
  on: z.boolean(),
  reason: z.string().trim().min(1, COLLECTIONS_MESSAGES.reasonRequired).max(500),
});
export const putKillSwitchResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  ...killSwitchSchema.shape,
  /** Automated commands cancelled by turning it on. */
  cancelled: z.number().int(),
});

// ---- Holds ----

export const holdSchema = z.object({
  /** The device's IMEI 1. */
  imei: z.string(),
  reason: z.string(),
  heldBy: z.string(),
  heldAt: z.string(),
  retailerPhone: z.string().nullable(),
});
export type Hold = z.infer<typeof holdSchema>;

/**
 * `GET /api/v2/collections/holds` (a retailer's user: its devices' holds only), newest first; `imei`
 * (either IMEI of a device): that device's hold only (an empty list when it is not held).
 */
export const listHoldsQuerySchema = z.object({
  imei: z
    .string()
    .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number')
    .optional(),
});
export const listHoldsResponseSchema = z.object({ status: z.literal('success'), items: z.array(holdSchema) });
export const imeiParamsSchema = z.object({
  imei: z.string().regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number'),
});
/** `PUT /api/v2/collections/holds/{imei}` (either IMEI of the device). */
export const putHoldRequestSchema = z.object({
  reason: z.string().trim().min(1, COLLECTIONS_MESSAGES.reasonRequired).max(500),
});
export const putHoldResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  hold: holdSchema,
});
/** `DELETE /api/v2/collections/holds/{imei}`: answers `{status, message}`. */

// ---- Release approval queue ----

/**
 * A release's state: awaiting an operator; approved (its RELEASE issued after the decision); rejected; or
 * refused (approved, but the command could not be recorded: the device is not registered, or released).
 * The server reads each from the action's row by one mapping (collections/releases/repository.ts).
 */
export const RELEASE_STATES = ['AWAITING_APPROVAL', 'APPROVED', 'REJECTED', 'REFUSED'] as const;
export type ReleaseState = (typeof RELEASE_STATES)[number];
export const releaseRequestSchema = z.object({
  /** The action's id. */
  id: z.number(),
  loanId: z.number(),
  loanRef: z.string(),
  imei: z.string(),
  customerName: z.string(),
  retailerPhone: z.string().nullable(),
  /** When the last instalment was paid (the loan became PAID). */
  paidAt: z.string().nullable(),
  queuedAt: z.string(),
  state: z.enum(RELEASE_STATES),
  decidedBy: z.string().nullable(),
  decidedAt: z.string().nullable(),
  /** The RELEASE command's transactionId once approved. */
  transactionId: z.string().nullable(),
});
export type ReleaseRequest = z.infer<typeof releaseRequestSchema>;

/**
 * `GET /api/v2/collections/releases?state=AWAITING_APPROVAL` (default) `&imei=` (optional), newest first, at
 * most 500.
 */
export const listReleasesQuerySchema = z.object({
  state: z.enum(RELEASE_STATES).optional().default('AWAITING_APPROVAL'),
  /** One device's releases (either IMEI). */
  imei: z
    .string()
    .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number')
    .optional(),
});
export const listReleasesResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(releaseRequestSchema),
});
export const releaseIdParamsSchema = z.object({ id: z.coerce.number().int().positive() });
/** `POST /api/v2/collections/releases/{id}/approve` and `…/reject`. */
export const decideReleaseRequestSchema = z.object({ reason: z.string().trim().max(500).optional() });
export const decideReleaseResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  release: releaseRequestSchema,
});

// ---- Failed automated actions (Device Details) ----

export const failedActionSchema = z.object({
  /** The action's id. */
  id: z.number(),
  imei: z.string(),
  loanRef: z.string(),
  action: collectionActionSchema,
  rule: z.string(),
  /** The lender's day it was taken, YYYY-MM-DD. */
  actionDate: z.string(),
  state: z.enum(ACTION_FAILURE_STATES),
  attempts: z.number().int(),
  maxAttempts: z.number().int(),
  /** When the next attempt is due (RETRYING, waiting); null otherwise. */
  retryAt: z.string().nullable(),
  /** Why the last attempt failed (the device's result), or why it was given up. */
  result: z.string().nullable(),
  /** The last attempt's command. */
  transactionId: z.string().nullable(),
});
export type FailedAction = z.infer<typeof failedActionSchema>;

/**
 * `GET /api/v2/collections/failures?imei=` (either IMEI): the device's automated actions whose commands
 * failed, retrying or given up, newest first (at most 50). Another retailer's device: an empty list.
 */
export const listFailuresQuerySchema = z.object({
  imei: z.string().regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number'),
});
export const listFailuresResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(failedActionSchema),
});

// ---- Daily runs ----

export const RUN_STATES = ['RUNNING', 'DONE', 'STOPPED'] as const;
export const runSchema = z.object({
  id: z.number(),
  /** The lender's day it ran for. */
  runDate: z.string(),
  version: z.number().int(),
  state: z.enum(RUN_STATES),
  startedAt: z.string(),
  finishedAt: z.string().nullable(),
  /** Loans processed so far (the cursor's progress). */
  processed: z.number().int(),
  counts: planCountsSchema,
  /** Times the run was resumed after its instance stopped mid-run. */
  resumes: z.number().int(),
});
export type CollectionsRun = z.infer<typeof runSchema>;

/** `GET /api/v2/collections/runs`: the 30 most recent daily runs. */
export const listRunsResponseSchema = z.object({ status: z.literal('success'), items: z.array(runSchema) });
