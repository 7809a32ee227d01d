/** The pure side of Forgot Password: validate() and the failure texts of the password flows. */
import { MESSAGES, validateForgotPasswordForm } from '@lendlock/contract';
import { ApiError } from '../../../api/client';

/** 'Please enter a valid email address.' unless the field holds an email address. */
export function validateForgotPassword(email: string): string | null {
  return validateForgotPasswordForm(email);
}

/** A refusal with a message: 'Error: ' + message; anything else: 'An error occurred. Please try again.' + the error. */
export function forgotPasswordFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return MESSAGES.errorPrefix(error.serverMessage);
  return `${MESSAGES.passwordFlowError} ${error instanceof Error ? error.message : String(error)}`;
}
