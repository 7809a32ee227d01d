/**
 * Password reset calls: `forgotPassword.php` mails a single-use link and never
 * returns the token; `reset_password.php` takes the token from that link. Neither sends X-API-Key.
 */
import { type StatusMessage, statusMessageSchema } from '@lendlock/contract';
import { type ApiClient, ApiError } from './client';

/** A `{status, message}` reply; anything but 'success' is a failure carrying the server's message. */
function parseSuccess(body: unknown): StatusMessage {
  const reply = statusMessageSchema.parse(body);
  if (reply.status !== 'success') throw new ApiError(200, body);
  return reply;
}

/** Answers 'Password reset link sent to your email.' for known and unknown addresses alike. */
export function requestPasswordReset(api: ApiClient, email: string): Promise<StatusMessage> {
  return api.call('forgotPassword', { method: 'POST', body: { email }, auth: false, parse: parseSuccess });
}

export function resetPassword(
  api: ApiClient,
  request: { token: string; newPassword: string },
): Promise<StatusMessage> {
  return api.call('reset_password', { method: 'POST', body: request, auth: false, parse: parseSuccess });
}
