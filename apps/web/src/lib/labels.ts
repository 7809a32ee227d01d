/**
 * Field labels, headings and buttons of the console's own screens. The spec's messages live in the
 * contract's MESSAGES; these are the screen texts it does not (yet) hold. Tests import them from here.
 */
export const LABELS = {
  loginIdentifier: 'Enter Email or Phone',
  password: 'Password',
  login: 'Login',
  superadminLogin: 'Super Admin Login',
  forgotPasswordLink: 'Forgot Password?',
  forgotPasswordTitle: 'Forgot Password',
  email: 'Email',
  sendResetEmail: 'Send Password Reset Email',
  resetPasswordTitle: 'Reset Your Password',
  newPassword: 'New Password',
  confirmPassword: 'Confirm Password',
  resetPassword: 'Reset Password',
  backToLogin: 'Back to Login',
  toggleNavigation: 'Toggle navigation',
  mainNavigation: 'Main navigation',
  skipToContent: 'Skip to main content',
  close: 'Close',
  clear: 'Clear',
  currentTime: 'Current time',
  signingOut: 'Signing out…',
  loading: 'Loading…',
} as const;
