/**
 * Every user-visible text of the spec, once. Reproduced exactly, typos and double spaces included.
 * Screens and tests import these rather than retyping them.
 */
export const MESSAGES = {
  // Layout and guards
  noticeExpires: (date: string) => `Dear User your login access Expires on ${date}. Login again`,
  unauthorised: 'You are not authorised to use this feature.Contact Your Admin for support',
  authorizationFailed: 'Authorization Failed',
  authorizationFailedInvalid: 'Authorization Failed.Invalid',
  // Why a session ended, shown on /login (by the 401's `reason`, see sessionEndedMessage)
  sessionEndedByAdmin: 'Your session was ended by an administrator.',
  sessionExpired: 'Your session has expired.',
  sessionSignedOut: 'You were signed out. Please sign in again.',
  sessionPasswordReset: 'Your password was reset. Please sign in with the new password.',
  sessionEnded: 'Your session has ended. Please sign in again.',
  /** A session unused for SESSION_IDLE_TIMEOUT. */
  sessionIdle: 'Your session ended because it was not used for a while. Please sign in again.',
  /** The console's notice a minute before a session's idle end. */
  sessionIdleWarning: 'Your session will end in a minute unless you continue.',
  sessionStaySignedIn: 'Stay signed in',
  /** What the user was sending when the session ended: it never reached the server. */
  notSent: (what: string) => `Not sent: ${what}. Sign in and send it again.`,

  // Login
  loginNetworkFailure: 'Please try after sometime',
  loginRequired: 'Please enter your email or phone and your password.',
  loginSuccess: 'Login successful',
  loginInvalid: 'Invalid email/phone or password.',
  loginInactive: 'Your account is disabled. Contact Your Admin for support',
  loginSuperadminOnly: 'This sign-in is for super admins only.',
  loginThrottled: (minutes: number) =>
    `Too many failed sign-in attempts. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  logoutSuccess: 'Logged out successfully',

  // Fetch failures
  cannotFetch: 'Cannot fetch the data now, please try again',
  noValidDeviceData: 'No valid device data found for uploaded IMEIs.',
  uploadedFileError: 'An error occurred while processing the uploaded file.',
  uploadError: 'An error occurred while uploading the file.',
  userSessionNotFound: 'User session not found',
  noResults: 'No results found',
  reportFailure: 'Something went wrong.Please try again in sometime',

  // IMEI inputs
  imeiHint: 'Please provide a 15 digit IMEI number',
  auditImeiLength: 'IMEI number must be exactly 15 digits.',
  auditEmpty:
    'No Registration record found. Device might be released or not registered. Please check released record.',
  releaseConfirm: 'Are you sure you want to release this device?',
  deviceActionImei: 'Please enter exactly 15 digits for IMEI or type "ALL".',
  deviceActionTyping: "Only enter a 15-digit IMEI number or type 'ALL'.",
  deviceActionRequired: 'Please select a Device Action.',
  deviceActionInvalid: 'Please select a valid action',
  selectTemplate: 'Please select a template',

  // Batch CSV
  onlyCsv: 'Only CSV files are allowed.',
  invalidHeaders: 'Invalid Headers',
  headersNotMatched: 'headers not matched',
  moreThanTwoColumns: 'More than two columns found. please check your file',
  invalidImeiLength: 'Invalid Length found in imei, only 15 digits allowed',
  csvIncorrect: 'CSV contains incorrect format data.',
  invalidImeiSection: 'Invalid IMEI',
  notifyColumns: 'Invalid row, missing or extra columns',
  notifyImei: 'Invalid IMEI (must be 15 digits)',
  notifyTemplate: "Invalid template, expected values are 'Pre', 'Post', or 'Due'",
  notifyAmount: 'Invalid amount (must be a number with up to 2 decimal places)',
  notifyDate: 'Invalid date format (expected DD/MM/YYYY)',
  notifyIncorrectFields: (fields: string) => `Incorrect fields: ${fields}`,
  evaluatingBatch: 'Please wait while we evaluate this batch...',
  executingBatch: 'Please Wait while we are executing this batch...',
  batchCannotResume: 'This batch cannot be processed, please start a new batch or cancel this batch',
  noDataToDownload: 'No data to download.',
  incompleteBatch: 'Incomplete Batch Available',

  // Report
  endBeforeStart: 'End date cannot be prior to start date.',
  reportDatesRequired: 'StartDate and EndDate are required.',
  reportFilterRequired: 'Please select the registration filter.',
  /** A dated call's timeZone (the console's IANA zone) that this server does not know. */
  unknownTimeZone: 'expected an IANA time zone such as Asia/Kolkata or UTC.',

  // Users
  invalidEmailDomain: 'Invalid email domain',
  invalidPhone: 'Enter a valid 10 digits number',
  fillRequired: 'Please fill all required fields.',
  userAdded: 'User Added successfully',
  errorUpdatingUser: 'Error updating user.',
  tryAfterSometimeDot: 'Please try after sometime.',
  userUpdated: 'User updated successfully',
  errorSavingUser: 'Error saving user. Please try again.',

  // Password flows
  forgotEmailRequired: 'Please enter a valid email address.',
  resetTokenMissing: 'Invalid or missing token. Please request a new reset link.',
  resetTokenInvalid: 'Token is missing or invalid.',
  passwordsDoNotMatch: 'Passwords do not match.',
  /** The server's check against its list of breached and common passwords (ASVS 5.0 V6.2). */
  passwordTooCommon: 'Password is too common or known from a data breach',
  passwordFlowError: 'An error occurred. Please try again.',
  passwordResetSuccess: 'Password reset successful. Redirecting to login...',
  resetLinkSent: 'Password reset link sent to your email.',
  errorPrefix: (message: string) => `Error: ${message}`,

  // Single command refusals (not worded by the spec, whose console alerts the server's message as-is;
  // docs/features.md § Deviations from the spec, point 9). A retailer's user hears the plain 'not found' for
  // an unknown IMEI and for another retailer's device alike, so that device's existence is not revealed.
  commandNotFound: 'not found',
  commandNotRegistered: 'not found: no device is registered with this IMEI.',
  commandReleased: 'This device has been released and accepts no further commands.',
  commandDeenrolled: 'This device is de-enrolled: it must register again before it can receive commands.',
} as const;

/**
 * Loans and payments (not in the spec; docs/features.md § Loans and payments). The CSV field errors
 * follow the Notify CSV's style ('Invalid amount (…)', reported as 'Incorrect fields: …').
 */
export const LOAN_MESSAGES = {
  // Fields of the loans and payments CSVs and of the API's loans and payments
  reference: (field: string) =>
    `Invalid ${field} (1 to 100 letters, digits and . _ : / -, starting with a letter or digit)`,
  customerName: 'Invalid customer_name (required, at most 200 characters)',
  customerNameUnstorable: 'Invalid customer_name (must not contain NUL characters)',
  currency: 'Invalid currency (expected an ISO 4217 code such as INR)',
  instalmentNo: 'Invalid instalment_no (a whole number from 1 to 600)',
  dueDate: 'Invalid due_date (expected YYYY-MM-DD)',
  amount: (digits: number) =>
    digits === 0
      ? 'Invalid amount (must be a whole number greater than 0 in this currency)'
      : `Invalid amount (must be a number greater than 0 with up to ${digits} decimal places)`,
  amountShape: 'Invalid amount (must be a number greater than 0 with up to 3 decimal places)',
  amountTooLarge: 'Invalid amount (too large)',
  paidAt:
    'Invalid paid_at (expected YYYY-MM-DD, or a date-time with its offset such as 2026-07-01T10:30:00+05:30)',
  paidAtFuture: 'Invalid paid_at (it is in the future)',
  // A loan's rows and schedule
  differs: (field: string, line: number) => `${field} differs from line ${line} of the same loan_ref`,
  instalmentRepeated: (line: number) => `instalment_no repeats line ${line}`,
  instalmentGap: (count: number) =>
    `instalments of this loan_ref must be numbered 1 to ${count} without gaps`,
  instalmentCount: 'a loan has 1 to 600 instalments',
  dueNotAfter: (seq: number, previous: string) =>
    `due_date of instalment ${seq} must be later than the one before (${previous})`,
  paymentRepeated: (line: number) => `payment_ref repeats line ${line}`,
  ofInstalment: (seq: number, error: string) => `instalment ${seq}: ${error}`,
  loanRepeated: (position: number) => `loan_ref repeats loan ${position} of this request`,
  imeiRepeated: (loanRef: string) => `the IMEI already has loan ${loanRef} in this import`,
  // What the server finds
  unknownImei: 'Unknown IMEI (no registered device)',
  deviceReleased: 'The device is released: it takes no new loan',
  openLoanExists: (loanRef: string) => `The device already has an open loan (${loanRef})`,
  scheduleDiffers: 'loan_ref is already imported with another schedule (import it with replace to change it)',
  loanRefInUse: 'loan_ref is already in use',
  unknownLoan: 'Unknown loan_ref',
  paymentConflict: 'payment_ref is already recorded with another loan or amount',
  unknownPayment: 'Unknown payment_ref',
  // A lender-wide call naming a reference that more than one tenant uses (docs/tenancy.md)
  loanRefAmbiguous:
    'This loan_ref is used by more than one retailer: name the retailer (retailerPhone; null for the lender’s own loans) or find the loan by IMEI.',
  paymentRefAmbiguous:
    'This payment_ref is recorded by more than one retailer: name the retailer (retailerPhone; null for the lender’s own payments).',
  reversalReason: 'Please give the reason for the reversal (a chargeback, a bounced transfer).',
  reversalReopens: (loanRef: string) =>
    `The payment cannot be reversed: its paid loan would be open again, and the device already has another open loan (${loanRef}).`,
  currencyMismatch: (given: string, loan: string) => `The payment is in ${given}, the loan in ${loan}.`,
  // Answers
  loansIncorrect: 'The loans contain incorrect data: nothing was imported.',
  paymentsIncorrect: 'The payments contain incorrect data: nothing was recorded.',
  imported: (created: number, replaced: number, unchanged: number) =>
    `Loans imported: ${created} new, ${replaced} replaced, ${unchanged} unchanged.`,
  noLoan: 'No such loan',
  noLoanForImei: 'No loan found for this IMEI.',
  paymentRecorded: 'Payment recorded.',
  paymentDuplicate: 'This payment was already recorded (same payment_ref): nothing changed.',
  paymentReversed: 'Payment reversed: it no longer counts, and the loan stands as it does without it.',
  paymentReversedBefore: 'This payment was already reversed: nothing changed.',
  paymentsRecorded: (recorded: number, duplicates: number) =>
    `Payments recorded: ${recorded} new, ${duplicates} already recorded.`,
  promiseSet: (day: string) => `Promise to pay recorded: no automated lock until ${day}, included.`,
  promiseCleared: 'Promise to pay cleared.',
  promisePast: 'The promise-to-pay date must be today or later.',
  promiseTooFar: (days: number) => `The promise-to-pay date must be at most ${days} days from today.`,
  loanPaid: 'The loan is paid: it takes no promise to pay.',
  noFile: 'Attach the CSV file as "file".',
} as const;
