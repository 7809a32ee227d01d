import { z } from 'zod';
import { MESSAGES } from '../messages';
import { LOGGED_IN, userLevelSchema } from '../roles';

export const permissionSchema = z.object({
  id: z.number().int(),
  permission_name: z.string(),
});
export type Permission = z.infer<typeof permissionSchema>;

/** `login.php` request: `email` holds what was typed (an email or a 10-digit phone). */
export const loginRequestSchema = z.object({
  email: z.string().trim().min(1).max(254),
  password: z.string().min(1).max(1024),
});
export type LoginRequest = z.infer<typeof loginRequestSchema>;

/** The session fields `login.php` answers, which the console stores under `userSession`. */
export const sessionSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  /** ISO-8601 UTC instant when the session ends. */
  expiry: z.string(),
  token: z.string(),
  email: z.string(),
  userlevel: userLevelSchema,
  loggedin: z.literal(LOGGED_IN),
  permissions: z.array(permissionSchema),
  retailer_phone: z.string().optional(),
  /**
   * Present (true) only for an account whose level requires two-factor authentication and that has not
   * set it up: the session can do nothing but set it up (docs/operations.md, MFA).
   */
  mfa_enrolment_required: z.literal(true).optional(),
});
export type Session = z.infer<typeof sessionSchema>;
export type LoginResponse = Session;

/** Which sign-in screen is used: `/superadmin/login` admits SUPERADMIN accounts only. */
export const loginClientSchema = z.enum(['console', 'superadmin']);
export const LOGIN_CLIENT_HEADER = 'x-login-client';

/**
 * Why a console session stopped working, as the 401 of a call made with it says (`reason`, beside the
 * spec's 'Authorization Failed'); absent for a token the server does not know:
 * - `ended_by_admin`: a forced logout, a disable, a level change or a two-factor reset;
 * - `expired`: its absolute lifetime (`SESSION_TTL`) passed;
 * - `signed_out`: it was signed out (logout.php);
 * - `password_reset`: the account's password was reset;
 * - `idle`: it was not used for `SESSION_IDLE_TIMEOUT`.
 */
export const SESSION_END_REASONS = [
  'ended_by_admin',
  'expired',
  'signed_out',
  'password_reset',
  'idle',
] as const;
export const sessionEndReasonSchema = z.enum(SESSION_END_REASONS);
export type SessionEndReason = z.infer<typeof sessionEndReasonSchema>;

/** The line /login shows after a session ended for `reason` (null: the server did not say). */
export function sessionEndedMessage(reason: SessionEndReason | null): string {
  switch (reason) {
    case 'ended_by_admin':
      return MESSAGES.sessionEndedByAdmin;
    case 'expired':
      return MESSAGES.sessionExpired;
    case 'signed_out':
      return MESSAGES.sessionSignedOut;
    case 'password_reset':
      return MESSAGES.sessionPasswordReset;
    case 'idle':
      return MESSAGES.sessionIdle;
    case null:
      return MESSAGES.sessionEnded;
  }
}
