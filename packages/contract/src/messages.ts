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
} as const;
