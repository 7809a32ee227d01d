/**
 * Headings, buttons and prompts of the two-factor screens that the server does not send (its messages,
 * the second step's prompt among them, are the contract's MFA_MESSAGES).
 */
export const MFA_LABELS = {
  title: 'Two-factor authentication',
  requiredNotice: 'Your account requires two-factor authentication. Set it up to continue.',
  scan: 'Scan this QR code with your authenticator app, or type the key below into it.',
  qrAlt: 'QR code for your authenticator app',
  key: 'Key',
  turnOn: 'Turn on',
  verify: 'Verify',
  recoveryTitle: 'Save your recovery codes',
  recoveryHelp:
    'If you lose your phone, each code signs you in once instead of a code from your app. They are not shown again.',
  recoveryCodesList: 'Recovery codes',
  copy: 'Copy',
  copied: 'Copied',
  download: 'Download',
  continue: 'Continue',
  isOn: 'Two-factor authentication is on for your account.',
  codesLeft: (count: number) => `Recovery codes left: ${count}`,
  lostPhone: 'Lost your phone? Ask an administrator to reset your two-factor authentication.',
  back: 'Back',
  signOut: 'Sign out',
  accountMenu: (email: string) => `Account menu of ${email}`,
  recoveryFileName: 'recovery-codes.txt',
  // User Management
  resetMfa: 'Reset MFA',
  resetMfaOf: (email: string) => `Reset MFA of ${email}`,
  resetMfaConfirm: (email: string) =>
    `Reset two-factor authentication of ${email}? The user is signed out and sets it up again at the next sign-in.`,
} as const;
