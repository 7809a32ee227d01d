/**
 * Two-factor authentication (TOTP, RFC 6238) of console accounts: the second sign-in step, enrolment
 * and the administrators' reset. The spec has no such screen (it predates the requirement, OWASP ASVS L2
 * §2.8): every text here is ours, kept once so the server, the console and the tests share it.
 */
import { z } from 'zod';
import { sessionSchema } from './auth';

export const MFA_MESSAGES = {
  /** The second step's prompt, and the message of login.php's `mfa_required` answer. */
  codePrompt: 'Enter the 6-digit code',
  recoveryPrompt: 'Enter a recovery code',
  useRecoveryCode: 'Use a recovery code',
  useCode: 'Use the 6-digit code instead',
  codeFormat: 'Enter the 6 digits from your authenticator app.',
  recoveryFormat: 'Enter one of your recovery codes.',
  codeInvalid: 'Invalid code. Please try again.',
  codeReused: 'This code has already been used. Wait for the next code.',
  challengeExpired: 'Your sign-in has expired. Please sign in again.',
  enrolmentRequired: 'Set up two-factor authentication to continue.',
  alreadyEnabled: 'Two-factor authentication is already on for this account.',
  notStarted: 'Two-factor set-up has not been started. Please start again.',
  enabled: 'Two-factor authentication is on.',
  notSetUp: 'Two-factor authentication is not set up for this user.',
  /** The sealed secret does not open (MFA_SECRET_KEY changed): only a reset helps. */
  unreadable:
    'Two-factor authentication of this account cannot be checked: ask an administrator to reset it.',
  /** Too many wrong codes within MFA_LOCK_WINDOW: every code is refused until an administrator resets it. */
  locked:
    'Two-factor authentication of this account is locked after too many wrong codes: ask an administrator to reset it.',
  reset: 'Two-factor authentication reset. The user sets it up again at next sign-in.',
} as const;

/** What a person types: six digits (spaces allowed, as authenticator apps show "123 456"). */
export const mfaCodeSchema = z
  .string()
  .transform((value) => value.replace(/\s+/g, ''))
  .pipe(z.string().regex(/^\d{6}$/, MFA_MESSAGES.codeFormat));

/** login.php's answer for an account with two-factor authentication: no session yet, a second step. */
export const mfaChallengeSchema = z.object({
  status: z.literal('mfa_required'),
  message: z.string(),
  /** Single-use, short-lived, bound to the account: exchanged with a code at `v2/mfa/verify`. */
  mfaToken: z.string(),
});
export type MfaChallenge = z.infer<typeof mfaChallengeSchema>;

/** login.php answers the session as before, or the second step. */
export const loginAnswerSchema = z.union([sessionSchema, mfaChallengeSchema]);
export type LoginAnswer = z.infer<typeof loginAnswerSchema>;

/** `v2/mfa/verify`: the challenge's token and either a current code or one recovery code. */
export const mfaVerifyRequestSchema = z
  .object({
    mfaToken: z.string().min(16).max(256),
    code: mfaCodeSchema.optional(),
    recoveryCode: z.string().trim().min(1, MFA_MESSAGES.recoveryFormat).max(64).optional(),
  })
  .refine((body) => (body.code === undefined) !== (body.recoveryCode === undefined), {
    message: 'send either code or recoveryCode',
  });

/** `v2/mfa/status`: the caller's own state. */
export const mfaStatusResponseSchema = z.object({
  status: z.literal('success'),
  enabled: z.boolean(),
  /** The account's level requires two-factor authentication (MFA_REQUIRED_LEVELS). */
  required: z.boolean(),
  recoveryCodesLeft: z.number().int(),
});
export type MfaStatus = z.infer<typeof mfaStatusResponseSchema>;

/** `v2/mfa/enrol/start`: a new secret, shown until it is confirmed and never again. */
export const mfaEnrolmentResponseSchema = z.object({
  status: z.literal('success'),
  /** `otpauth://totp/…`, what the QR code holds. */
  otpauthUri: z.string(),
  /** The QR code as an image data URL (SVG): the console's CSP admits `data:` images. */
  qrCode: z.string(),
  /** The Base32 secret in groups of four, for typing into an app by hand. */
  secret: z.string(),
});
export type MfaEnrolment = z.infer<typeof mfaEnrolmentResponseSchema>;

export const mfaConfirmRequestSchema = z.object({ code: mfaCodeSchema });
/** Ten single-use recovery codes, shown this once: only their hashes are kept. */
export const mfaConfirmResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  recoveryCodes: z.array(z.string()),
});

/** `v2/mfa/reset` (User Management): the account, by email as the spec's user calls name it. */
export const mfaResetRequestSchema = z.object({ email: z.string().trim().min(1).max(254) });

/** `v2/mfa/users` (User Management): the ids of the accounts whose two-factor authentication is on. */
export const mfaUsersResponseSchema = z.object({
  status: z.literal('success'),
  userIds: z.array(z.number().int()),
});
