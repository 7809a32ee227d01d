/** The pure side of Reset Your Password: validate(), the failure text and the redirect delay. */
import { MESSAGES, validatePassword, validateResetPasswordForm } from '@lendlock/contract';
import { ApiError } from '../../../api/client';

/** The redirect to /login after a successful reset, in ms. */
export const RESET_REDIRECT_MS = 3000;

export interface ResetPasswordDraft {
  /** From the link's /resetPassword/{token}. */
  token: string | undefined;
  password: string;
  confirm: string;
}

/**
 * The token must be there ('Invalid or missing token. Please request a new reset link.'), the two
 * passwords must match ('Passwords do not match.'), and the password must satisfy the configured length.
 */
export function validateResetPassword(draft: ResetPasswordDraft, minLength: number): string | null {
  return (
    validateResetPasswordForm({
      token: draft.token?.trim(),
      password: draft.password,
      confirm: draft.confirm,
    }) ?? validatePassword(draft.password, minLength)
  );
}

/** The server's refusal as it words it (e.g. 'Token is missing or invalid.'); otherwise the generic text. */
export function resetPasswordFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  return `${MESSAGES.passwordFlowError} ${error instanceof Error ? error.message : String(error)}`;
}
