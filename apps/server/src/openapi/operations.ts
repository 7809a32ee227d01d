/**
 * What the OpenAPI document says about each operation beyond its zod schemas: its operationId, summary,
 * tag, the errors it can answer, and — for the calls whose body or answer is not JSON — its multipart
 * request body or its file's content type. One table, keyed like the route permission table
 * (authz/policies.ts): `METHOD /path` with `:param`. Who may call (the security of each operation) is read
 * from that permission table, never repeated here.
 *
 * The table is applied to the generated document (plugins/openapi.ts), so the routes keep declaring only
 * what they validate. A route without a row here fails openapi/operations.test.ts.
 */
import {
  COMMAND_DEFINITIONS,
  type CommandDefinition,
  CSV_MIME_TYPES,
  IMEI_CSV_HEADERS,
  LOANS_CSV_HEADERS,
  NOTIFY_CSV_HEADERS,
  PAYMENTS_CSV_HEADERS,
} from '@lendlock/contract';

export type Tag =
  | 'Health'
  | 'Sign-in'
  | 'Two-factor authentication'
  | 'Password reset'
  | 'Users'
  | 'API keys'
  | 'Device registration'
  | 'Devices'
  | 'Enrollment secrets'
  | 'Financed IMEIs'
  | 'Commands'
  | 'Bulk uploads'
  | 'Batches'
  | 'Reports'
  | 'Audit log'
  | 'Webhooks'
  | 'Loans'
  | 'Collections';

export const TAGS: Readonly<Record<Tag, string>> = {
  Health: 'Liveness and readiness, for load balancers and orchestrators.',
  'Sign-in': 'Console sessions: sign-in and sign-out.',
  'Two-factor authentication': 'The second sign-in step and an account’s own authenticator set-up.',
  'Password reset': 'Forgotten passwords: the emailed link and the new password.',
  Users: 'User Management (ADMIN and SUPERADMIN, console sessions only).',
  'API keys': 'Key Management: the integrator keys sent as `X-API-Key`.',
  'Device registration':
    'The device agent’s own calls, admitted by an enrollment secret (`X-Enrollment-Secret`).',
  Devices: 'Device details, the dashboard and re-registration decisions.',
  'Enrollment secrets': 'The secrets that admit device registrations (SUPERADMIN).',
  'Financed IMEIs': 'The financed-IMEI list that decides a device’s Match_Status.',
  Commands: 'Single commands to one device and their live status.',
  'Bulk uploads': 'A CSV of IMEIs (multipart/form-data) that starts a server-side batch.',
  Batches: 'The batches a user may see, and their progress, results, downloads and control.',
  Reports: 'Reports, their streamed xlsx exports and the uploaded files they link to.',
  'Audit log': 'Every security-relevant action (SUPERADMIN).',
  Webhooks: 'Signed event deliveries to the integrator’s own endpoints.',
  Loans:
    'Loan schedules and payments: imported and recorded by the lender’s loan system or in the console, read on Device Details.',
  Collections:
    'Collections on autopilot: the lender’s policy and its versions, the plan of a day (dry run), the kill switch, holds, release approvals and the daily runs.',
};

/** A file answer: its media type and what it holds. */
export interface FileAnswer {
  readonly mediaType: string;
  readonly description: string;
}

export const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
export const CSV = 'text/csv';

/** A multipart/form-data body: a CSV file in `file` and optional text fields. */
export interface MultipartBody {
  readonly file: string;
  /** The file's media types the call accepts (a `.csv` name with no type passes too). */
  readonly fileTypes?: readonly string[];
  readonly fields?: Readonly<
    Record<string, { readonly description: string; readonly enum?: readonly string[] }>
  >;
}

export interface Operation {
  readonly operationId: string;
  readonly summary: string;
  readonly tag: Tag;
  readonly description?: string;
  /** Error statuses this call answers beyond those every call of its kind does (see `errorStatuses`). */
  readonly errors?: readonly number[];
  /** The call is throttled (sign-in, password reset, registration): 429 with Retry-After. */
  readonly throttled?: true;
  /** Admitted by an enrollment secret (`X-Enrollment-Secret`), not by `X-API-Key`. */
  readonly enrollmentSecret?: true;
  readonly multipart?: MultipartBody;
  readonly file?: FileAnswer;
}

const BULK_USER_FIELD = {
  description: 'Kept for compatibility: when sent, it must be the signed-in user’s email.',
};

function bulkOperation(definition: CommandDefinition): Operation {
  const script = (definition.bulkScript ?? '').replace(/\.php$/, '');
  const columns = definition.input === 'notify' ? NOTIFY_CSV_HEADERS : IMEI_CSV_HEADERS;
  const grey = definition.raw === 'GREYAPP';
  return {
    operationId: script,
    summary: `Bulk upload: ${grey ? 'Disable App (greyed out)' : definition.displayName}`,
    tag: 'Bulk uploads',
    description:
      `Starts a server-side batch of \`${definition.raw}\` commands, one per row of the uploaded CSV. ` +
      'The file is checked whole first: a bad row refuses it (400 with the rows in `invalid`) and nothing ' +
      'is sent. Follow the batch with `/api/v2/batch/progress`.',
    errors: [],
    multipart: {
      file: `The CSV, columns ${columns.join(', ')} (a header row first; at most BATCH_MAX_ROWS rows).`,
      fileTypes: CSV_MIME_TYPES,
      fields: {
        user: BULK_USER_FIELD,
        ...(grey
          ? { level: { description: 'How far the app is greyed out.', enum: ['level1', 'level2'] } }
          : {}),
      },
    },
  };
}

const BULK_OPERATIONS: Record<string, Operation> = Object.fromEntries(
  COMMAND_DEFINITIONS.filter(
    (d, i, all) => d.batch && d.bulkScript && all.findIndex((o) => o.bulkScript === d.bulkScript) === i,
  ).map((d) => [`POST /api/${d.bulkScript}`, bulkOperation(d as CommandDefinition)]),
);

/** `METHOD /path` → what the document says about it. */
export const OPERATIONS: Readonly<Record<string, Operation>> = {
  // Health
  'GET /healthz': { operationId: 'healthz', summary: 'Liveness: the process answers', tag: 'Health' },
  'GET /readyz': {
    operationId: 'readyz',
    summary: 'Readiness: the database and the broker are reachable',
    tag: 'Health',
  },
  // Sign-in
  'POST /api/login.php': {
    operationId: 'login',
    summary: 'Sign in with email and password',
    tag: 'Sign-in',
    description:
      'Answers a session token to send as `X-API-Key`, or, when the account uses two-factor ' +
      'authentication, a challenge for `/api/v2/mfa/verify`.',
    errors: [401, 403],
    throttled: true,
  },
  'POST /api/logout.php': { operationId: 'logout', summary: 'End the session', tag: 'Sign-in' },
  // Two-factor authentication
  'POST /api/v2/mfa/verify': {
    operationId: 'mfaVerify',
    summary: 'Complete a sign-in with a one-time code',
    tag: 'Two-factor authentication',
    errors: [401, 403],
    throttled: true,
  },
  'GET /api/v2/mfa/status': {
    operationId: 'mfaStatus',
    summary: 'Whether the signed-in account uses two-factor authentication',
    tag: 'Two-factor authentication',
  },
  'POST /api/v2/mfa/enrol/start': {
    operationId: 'mfaEnrolStart',
    summary: 'Start setting up an authenticator',
    tag: 'Two-factor authentication',
    errors: [409],
  },
  'POST /api/v2/mfa/enrol/confirm': {
    operationId: 'mfaEnrolConfirm',
    summary: 'Confirm an authenticator with its first code',
    tag: 'Two-factor authentication',
    errors: [409],
  },
  'GET /api/v2/mfa/users': {
    operationId: 'mfaUsers',
    summary: 'List who uses two-factor authentication',
    tag: 'Two-factor authentication',
  },
  'POST /api/v2/mfa/reset': {
    operationId: 'mfaReset',
    summary: 'Reset a user’s two-factor authentication',
    tag: 'Two-factor authentication',
    errors: [404, 409],
  },
  // Password reset
  'POST /api/forgotPassword.php': {
    operationId: 'forgotPassword',
    summary: 'Email a password reset link',
    tag: 'Password reset',
    throttled: true,
  },
  'POST /api/reset_password.php': {
    operationId: 'resetPassword',
    summary: 'Set a new password with a reset link’s token',
    tag: 'Password reset',
    throttled: true,
  },
  // Users
  'GET /api/getUsers.php': { operationId: 'getUsers', summary: 'List users', tag: 'Users' },
  'GET /api/getPermissions.php': {
    operationId: 'getPermissions',
    summary: 'List the permissions a user can hold',
    tag: 'Users',
  },
  'POST /api/addUser.php': { operationId: 'addUser', summary: 'Add a user', tag: 'Users', errors: [409] },
  'POST /api/updateUser.php': {
    operationId: 'updateUser',
    summary: 'Edit a user',
    tag: 'Users',
    errors: [404, 409],
  },
  'POST /api/updateUserStatus.php': {
    operationId: 'updateUserStatus',
    summary: 'Activate or deactivate a user',
    tag: 'Users',
    errors: [404],
  },
  'POST /api/updateLoginStatus.php': {
    operationId: 'updateLoginStatus',
    summary: 'Allow or block a user’s sign-in',
    tag: 'Users',
    errors: [404],
  },
  // API keys
  'GET /keyapi/keymanagement/view_keys.php': {
    operationId: 'viewKeys',
    summary: 'List API keys',
    tag: 'API keys',
  },
  'POST /keyapi/generate_key.php': {
    operationId: 'generateKey',
    summary: 'Generate an API key (shown once)',
    tag: 'API keys',
    errors: [401],
  },
  'POST /keyapi/keymanagement/update_key_status.php': {
    operationId: 'updateKeyStatus',
    summary: 'Activate or deactivate an API key',
    tag: 'API keys',
    errors: [404],
  },
  // Device registration (the agent)
  'POST /device/v1/nonce': {
    operationId: 'deviceNonce',
    summary: 'Get a registration nonce for the device key to sign',
    tag: 'Device registration',
    errors: [401],
    throttled: true,
    enrollmentSecret: true,
  },
  'POST /device/v1/register': {
    operationId: 'deviceRegister',
    summary: 'Register a device and receive its broker credential',
    tag: 'Device registration',
    errors: [401, 403, 409],
    throttled: true,
    enrollmentSecret: true,
  },
  // Devices
  'POST /api/v2/deviceIdentity': {
    operationId: 'deviceIdentity',
    summary: 'A device’s key and its registrations waiting for approval',
    tag: 'Devices',
    errors: [404],
  },
  'POST /api/v2/reregistration/decide': {
    operationId: 'decideReregistration',
    summary: 'Approve or reject a waiting re-registration',
    tag: 'Devices',
    errors: [404, 409],
  },
  'GET /api/homeData.php': { operationId: 'homeData', summary: 'Dashboard counters', tag: 'Devices' },
  'GET /api/v2/dashboard': { operationId: 'dashboard', summary: 'Dashboard charts', tag: 'Devices' },
  'POST /api/devicedetails.php': {
    operationId: 'deviceDetails',
    summary: 'Look up devices by IMEI',
    tag: 'Devices',
  },
  'POST /api/auditReportByImei.php': {
    operationId: 'auditReportByImei',
    summary: 'A device’s registrations, commands and de-enrolments',
    tag: 'Devices',
  },
  'POST /api/getAppVersionDevices.php': {
    operationId: 'getAppVersionDevices',
    summary: 'Devices by agent version',
    tag: 'Devices',
  },
  // Enrollment secrets
  'GET /api/v2/enrollmentSecrets': {
    operationId: 'listEnrollmentSecrets',
    summary: 'List enrollment secrets',
    tag: 'Enrollment secrets',
  },
  'POST /api/v2/enrollmentSecrets': {
    operationId: 'addEnrollmentSecret',
    summary: 'Add an enrollment secret (shown once)',
    tag: 'Enrollment secrets',
    errors: [409],
  },
  'POST /api/v2/enrollmentSecrets/revoke': {
    operationId: 'revokeEnrollmentSecret',
    summary: 'Revoke an enrollment secret',
    tag: 'Enrollment secrets',
    errors: [404],
  },
  // Financed IMEIs
  'POST /api/v2/financedImeis': {
    operationId: 'addFinancedImeis',
    summary: 'Add IMEIs to the financed list',
    tag: 'Financed IMEIs',
  },
  'POST /api/v2/financedImeis/upload': {
    operationId: 'uploadFinancedImeis',
    summary: 'Add the IMEIs of a CSV to the financed list',
    tag: 'Financed IMEIs',
    description: 'The whole file is checked first: a bad row refuses it and nothing is added.',
    multipart: {
      file: 'The CSV, with an imei1 column (a header row first; at most BATCH_MAX_ROWS rows).',
    },
  },
  // Commands
  'POST /api/locknotification.php': {
    operationId: 'lockNotification',
    summary: 'Send a command to one device',
    tag: 'Commands',
    description:
      'The action decides the command and the permission it needs (the command definition table). ' +
      'Answers the command’s `transactionId`; follow it with `/api/v2/commandStatus`.',
    errors: [404, 409],
  },
  'POST /api/formattedDevice.php': {
    operationId: 'formattedDevice',
    summary: 'Mark a device as formatted',
    tag: 'Commands',
    errors: [404, 409],
  },
  'POST /api/adminlocknotification.php': {
    operationId: 'adminLockNotification',
    summary: 'Send a device action (reboot, update) as SUPERADMIN',
    tag: 'Commands',
    errors: [404, 409],
  },
  'POST /api/v2/commandStatus': {
    operationId: 'commandStatus',
    summary: 'A command’s live status',
    tag: 'Commands',
    errors: [404],
  },
  'POST /api/v2/batchStatus': {
    operationId: 'batchStatus',
    summary: 'A batch’s command counts by status',
    tag: 'Commands',
    errors: [404],
  },
  'POST /api/v2/pendingCommands': {
    operationId: 'pendingCommands',
    summary: 'A device’s commands not yet executed',
    tag: 'Commands',
  },
  'POST /api/v2/cancelCommand': {
    operationId: 'cancelCommand',
    summary: 'Cancel a command not yet executed',
    tag: 'Commands',
    errors: [404, 409],
  },
  'POST /api/getimeidetails.php': {
    operationId: 'getImeiDetails',
    summary: 'Send one row of the legacy per-IMEI loop',
    tag: 'Commands',
    errors: [404, 409],
  },
  'POST /api/updateStatusOnServer.php': {
    operationId: 'updateStatusOnServer',
    summary: 'Record a legacy per-IMEI loop’s progress',
    tag: 'Commands',
  },
  'PUT /api/updateCommandOnServer.php': {
    operationId: 'updateCommandOnServer',
    summary: 'Close a legacy per-IMEI loop',
    tag: 'Commands',
  },
  // Bulk uploads
  ...BULK_OPERATIONS,
  // Batches
  'POST /api/v2/batch/progress': {
    operationId: 'batchProgress',
    summary: 'A batch’s progress',
    tag: 'Batches',
    errors: [404],
  },
  'POST /api/v2/batch/current': {
    operationId: 'currentBatch',
    summary: 'The batch of a screen still running, if any',
    tag: 'Batches',
  },
  'POST /api/v2/batch/results': {
    operationId: 'batchResults',
    summary: 'A batch’s rows and their outcomes',
    tag: 'Batches',
    description:
      'A page of the processed rows after S.No. `offset` (keyset paging: pass the last S.No. of the previous ' +
      'page), all of them or only the found or not found ones (`filter`), or the not found ones of one ' +
      '`reason`. A not found row says why in `note`: not registered, released or de-enrolled.',
    errors: [404],
  },
  'GET /api/v2/batch/export': {
    operationId: 'exportBatchResults',
    summary: 'Download a batch’s results as CSV',
    tag: 'Batches',
    description:
      'The selection of `/api/v2/batch/results`, whole, as the console’s results file: imei_data.csv ' +
      '(S.No., IMEI, Status, Reason), or for a Notify batch the uploaded file’s name with its columns and ' +
      'the Reason. Streamed; `X-Total-Rows` gives the number of rows.',
    errors: [404],
    file: { mediaType: CSV, description: 'The results, UTF-8 with a byte order mark, CRLF line ends.' },
  },
  'POST /api/v2/batches': {
    operationId: 'listBatches',
    summary: 'The batches the caller may see, newest first',
    tag: 'Batches',
    description:
      'The caller’s own batches and those of lower levels (not for a retailer’s user), of the commands ' +
      'whose screen the caller holds; a page of `limit`, then the next with `before` set to `next`.',
  },
  'POST /api/v2/batch/pause': {
    operationId: 'pauseBatch',
    summary: 'Pause a batch',
    tag: 'Batches',
    errors: [404],
  },
  'POST /api/v2/batch/resume': {
    operationId: 'resumeBatch',
    summary: 'Resume a paused batch',
    tag: 'Batches',
    errors: [404],
  },
  'POST /api/v2/batch/cancel': {
    operationId: 'cancelBatch',
    summary: 'Cancel a batch',
    tag: 'Batches',
    errors: [404],
  },
  // Reports
  'POST /api/downloadReports.php': {
    operationId: 'downloadReports',
    summary: 'A page of a report',
    tag: 'Reports',
  },
  'GET /api/v2/reports/export': {
    operationId: 'exportReport',
    summary: 'Export a report as xlsx',
    tag: 'Reports',
    file: { mediaType: XLSX, description: 'The report, streamed as an xlsx workbook.' },
  },
  'GET /api/v2/uploads/:feature/:file': {
    operationId: 'downloadUpload',
    summary: 'Download a bulk upload’s CSV',
    tag: 'Reports',
    errors: [404, 410],
    file: { mediaType: CSV, description: 'The CSV as it was uploaded.' },
  },
  'GET /api/v2/auditReport/export': {
    operationId: 'exportAuditReportByImei',
    summary: 'Export a device’s audit report as xlsx',
    tag: 'Devices',
    errors: [404],
    file: { mediaType: XLSX, description: 'The device’s audit report: one sheet per section.' },
  },
  // Audit log
  'POST /api/v2/audit/search': {
    operationId: 'searchAudit',
    summary: 'Search the audit log',
    tag: 'Audit log',
  },
  'GET /api/v2/audit/export': {
    operationId: 'exportAudit',
    summary: 'Export the audit log as xlsx',
    tag: 'Audit log',
    file: { mediaType: XLSX, description: 'The matching entries, streamed as an xlsx workbook.' },
  },
  // Webhooks
  'GET /api/v2/webhooks': {
    operationId: 'listWebhooks',
    summary: 'List webhook endpoints',
    tag: 'Webhooks',
  },
  'POST /api/v2/webhooks': {
    operationId: 'addWebhook',
    summary: 'Register a webhook endpoint (its signing secret shown once)',
    tag: 'Webhooks',
  },
  'POST /api/v2/webhooks/update': {
    operationId: 'updateWebhook',
    summary: 'Edit a webhook endpoint',
    tag: 'Webhooks',
    errors: [404],
  },
  'POST /api/v2/webhooks/delete': {
    operationId: 'deleteWebhook',
    summary: 'Remove a webhook endpoint',
    tag: 'Webhooks',
    errors: [404],
  },
  'POST /api/v2/webhooks/deliveries': {
    operationId: 'listWebhookDeliveries',
    summary: 'List an endpoint’s deliveries',
    tag: 'Webhooks',
    errors: [404],
  },
  'POST /api/v2/webhooks/replay': {
    operationId: 'replayWebhookDelivery',
    summary: 'Send a delivery again',
    tag: 'Webhooks',
    errors: [404],
  },
  // Loans and payments
  'POST /api/v2/loans': {
    operationId: 'importLoans',
    summary: 'Import loan schedules',
    tag: 'Loans',
    description:
      'All or none: a loan that cannot be imported (a bad field, an unknown IMEI, a device with another open ' +
      'loan, a loan_ref imported with another schedule and no `replace`) refuses the request with every such ' +
      'loan in `invalid` (its position in `loans` as `line`). A loan_ref imported before with the same ' +
      'schedule changes nothing; with `replace`, a different schedule replaces it and its payments are ' +
      'applied again.',
  },
  'POST /api/v2/loans/upload': {
    operationId: 'uploadLoans',
    summary: 'Import the loans of a CSV',
    tag: 'Loans',
    description:
      'One row per instalment. The whole file is checked first, then the loans as `POST /api/v2/loans` ' +
      'does: any bad row refuses it (400 with the rows in `invalid`, as incorrect_data.csv lists them) and ' +
      'nothing is imported.',
    multipart: {
      file: `The CSV, columns ${LOANS_CSV_HEADERS.join(', ')} (a header row first; at most BATCH_MAX_ROWS rows).`,
      fileTypes: CSV_MIME_TYPES,
      fields: {
        replace: {
          description: 'Replace the schedule of a loan_ref imported before with the file’s.',
          enum: ['true', 'false'],
        },
      },
    },
  },
  'POST /api/v2/loans/get': {
    operationId: 'getLoan',
    summary: 'A device’s loan (by IMEI) or a loan by its ref, with its summary',
    tag: 'Loans',
    description:
      'By IMEI: the device’s open loan, else its latest. The summary (next due, days overdue, arrears, ' +
      'instalments paid and unpaid, last payment) is for today in `timeZone`.',
    errors: [404],
  },
  'POST /api/v2/loans/promise': {
    operationId: 'setPromiseToPay',
    summary: 'Set or clear a loan’s promise-to-pay date',
    tag: 'Loans',
    description: 'No automated lock up to and including that day (today to 90 days ahead); `null` clears it.',
    errors: [404, 409],
  },
  'POST /api/v2/payments': {
    operationId: 'recordPayment',
    summary: 'Record a payment (idempotent by paymentRef)',
    tag: 'Loans',
    description:
      'Paid into the oldest unpaid instalment first; beyond the whole balance it is kept as credit. The same ' +
      '`paymentRef` sent again with the same loan and amount answers the payment recorded first ' +
      '(`duplicate: true`) and changes nothing; with another loan or amount, 409.',
    errors: [404, 409],
  },
  'POST /api/v2/payments/reverse': {
    operationId: 'reversePayment',
    summary: 'Reverse a payment (a chargeback, a bounced transfer) by its paymentRef',
    tag: 'Loans',
    description:
      'The payment is kept, marked reversed (when, by whom, `reason`), and counts nowhere from then on: the ' +
      'loan’s instalments are allocated again from the payments that stand (oldest paid first), so a PAID ' +
      'loan that is no longer paid is OPEN again, and collections judges it again (a lock may follow). What ' +
      'was sent to the device is not undone: a release already issued stays issued. Reversing a payment ' +
      'reversed before answers `duplicate: true` and changes nothing. A payment of another retailer’s ' +
      'device is not found (404), as an unknown one; 409 when its paid loan would be open again beside ' +
      'another open loan of the device. Audited as `loan.payment.reverse`.',
    errors: [404, 409],
  },
  'POST /api/v2/payments/upload': {
    operationId: 'uploadPayments',
    summary: 'Record the payments of a CSV',
    tag: 'Loans',
    description:
      'All or none, each as `POST /api/v2/payments` records one: a row that cannot be recorded refuses the ' +
      'file (400 with the rows in `invalid`); payments recorded before under the same ref are counted in ' +
      '`duplicates`.',
    multipart: {
      file: `The CSV, columns ${PAYMENTS_CSV_HEADERS.join(', ')} (a header row first; at most BATCH_MAX_ROWS rows).`,
      fileTypes: CSV_MIME_TYPES,
    },
  },
  // Collections on autopilot
  'GET /api/v2/collections/policy': {
    operationId: 'getCollectionsPolicy',
    summary: 'The collections policy in force and its version',
    tag: 'Collections',
    description: 'Version 0 is the default, never saved: switched off.',
  },
  'PUT /api/v2/collections/policy': {
    operationId: 'saveCollectionsPolicy',
    summary: 'Save a new version of the collections policy (SUPERADMIN)',
    tag: 'Collections',
    description:
      'The whole policy; a policy equal to the one in force saves nothing. An ADMIN is refused (403) with a ' +
      'message saying only a SUPERADMIN can; refusals and saves are audited with what changed.',
  },
  'GET /api/v2/collections/policy/versions': {
    operationId: 'listCollectionsPolicyVersions',
    summary: 'Every version of the policy: who changed what, when',
    tag: 'Collections',
  },
  'POST /api/v2/collections/plan': {
    operationId: 'planCollections',
    summary: 'What the policy does on a day (the dry run and Today’s Plan)',
    tag: 'Collections',
    description:
      'With `policy`, an unsaved policy is planned (a dry run); without `date`, today in the policy’s zone. ' +
      'Counts per action and per reason skipped, and the items a page at a time (`cursor`). A retailer’s ' +
      'user sees its devices only.',
  },
  'POST /api/v2/collections/plan/export': {
    operationId: 'exportCollectionsPlan',
    summary: 'The whole plan of a day as CSV',
    tag: 'Collections',
    file: { mediaType: CSV, description: 'Every item of the plan (UTF-8 with a byte order mark), streamed.' },
  },
  'GET /api/v2/collections/kill-switch': {
    operationId: 'getCollectionsKillSwitch',
    summary: 'Whether automated collections are stopped',
    tag: 'Collections',
  },
  'PUT /api/v2/collections/kill-switch': {
    operationId: 'setCollectionsKillSwitch',
    summary: 'Stop (ADMIN or SUPERADMIN) or resume (SUPERADMIN) all automated collections',
    tag: 'Collections',
    description:
      'On: the daily run stops after its chunk under way and the automated commands still QUEUED are ' +
      'cancelled (result `collections stopped`). A retailer’s user can do neither. Audited.',
    errors: [409],
  },
  'GET /api/v2/collections/holds': {
    operationId: 'listCollectionsHolds',
    summary: 'Devices held from collections',
    tag: 'Collections',
  },
  'PUT /api/v2/collections/holds/:imei': {
    operationId: 'holdFromCollections',
    summary: 'Hold a device: collections sends it nothing',
    tag: 'Collections',
    errors: [404],
  },
  'DELETE /api/v2/collections/holds/:imei': {
    operationId: 'removeCollectionsHold',
    summary: 'Remove a device’s hold',
    tag: 'Collections',
    errors: [404],
  },
  'GET /api/v2/collections/releases': {
    operationId: 'listCollectionsReleases',
    summary: 'Releases awaiting approval (or approved, rejected)',
    tag: 'Collections',
  },
  'POST /api/v2/collections/releases/:id/approve': {
    operationId: 'approveCollectionsRelease',
    summary: 'Approve a release: the RELEASE command goes out',
    tag: 'Collections',
    errors: [404, 409],
  },
  'POST /api/v2/collections/releases/:id/reject': {
    operationId: 'rejectCollectionsRelease',
    summary: 'Reject a release',
    tag: 'Collections',
    errors: [404, 409],
  },
  'GET /api/v2/collections/runs': {
    operationId: 'listCollectionsRuns',
    summary: 'The recent daily runs, with their counts',
    tag: 'Collections',
  },
  'GET /api/v2/collections/failures': {
    operationId: 'listCollectionsFailures',
    summary: 'A device’s automated actions that failed on it: retrying or given up',
    tag: 'Collections',
    description:
      'The LOCK, UNLOCK and RELEASE actions collections sent to the device (`imei`) whose command the ' +
      'device reported FAILED, newest first: `RETRYING` (sent again after 5, 15 and 45 minutes within the ' +
      'lender’s day) or `FAILED` (given up), with the attempts and the device’s reason. A retailer’s user ' +
      'sees only its devices’ actions (another retailer’s device: an empty list).',
  },
};

export const ERROR_DESCRIPTIONS: Readonly<Record<number, string>> = {
  400: 'The request is not valid (`VALIDATION_FAILED`, `BAD_ENVELOPE`).',
  401: 'No valid credential (`UNAUTHENTICATED`; for a console session that ended, `reason` says why: `ended_by_admin`, `expired`, `signed_out`, `password_reset` or `idle`), or wrong credentials (`INVALID_CREDENTIALS`).',
  403: 'The credential lacks the right (`FORBIDDEN`, `ACCOUNT_DISABLED`, `MFA_ENROLMENT_REQUIRED`, `MFA_LOCKED`).',
  404: 'No such resource (`NOT_FOUND`).',
  409: 'The resource’s state forbids it (`CONFLICT` and the call’s own codes).',
  410: 'The resource existed and was removed (`GONE`).',
  413: 'The request body is too large (`PAYLOAD_TOO_LARGE`).',
  415: 'Unsupported content type (`UNSUPPORTED_MEDIA_TYPE`).',
  429: 'Too many requests (`RATE_LIMITED`); retry after the `Retry-After` seconds.',
  500: 'Something went wrong on the server (`INTERNAL`).',
  503: 'A dependency (database, broker) is unreachable (`UNAVAILABLE`).',
};
