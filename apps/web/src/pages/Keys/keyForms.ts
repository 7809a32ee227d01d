/**
 * The pure side of Key Management: the key name's and the password's validate(), the status toggle, why a
 * key is inactive, and the failure texts.
 */
import {
  type ApiKey,
  generateKeyRequestSchema,
  KEY_MESSAGES,
  type KeyStatus,
  MESSAGES,
} from '@lendlock/contract';
import { ApiError, NetworkError } from '../../api/client';

/** The contract's rule for `key_name` (required, at most 100 characters); the first problem's message. */
export function validateKeyName(keyName: string): string | null {
  const result = generateKeyRequestSchema.shape.key_name.safeParse(keyName);
  return result.success ? null : (result.error.issues[0]?.message ?? MESSAGES.fillRequired);
}

/** The Generate Key dialog's password (the contract's rule: required). */
export function validateKeyPassword(password: string): string | null {
  const result = generateKeyRequestSchema.shape.password.safeParse(password);
  return result.success ? null : (result.error.issues[0]?.message ?? MESSAGES.fillRequired);
}

/**
 * Why an inactive key is inactive, and who may switch it on again when its owner alone may not; null for
 * an active key.
 */
export function inactiveReasonText(
  key: Pick<ApiKey, 'status' | 'deactivated_by' | 'deactivated_by_level' | 'deactivated_reason'>,
): string | null {
  if (key.status === 'active') return null;
  const by = key.deactivated_by ?? 'the system';
  const why = (() => {
    switch (key.deactivated_reason) {
      case 'manual':
        return `Deactivated by ${by}.`;
      case 'account disabled':
        return `Deactivated when ${by} disabled the account.`;
      case 'forced logout':
        return `Deactivated with the forced logout by ${by}.`;
      case 'password reset':
        return 'Deactivated by the password reset of the account.';
      case null:
        return 'Deactivated.';
    }
  })();
  const level = key.deactivated_by_level;
  return level === 'ADMIN' || level === 'SUPERADMIN'
    ? `${why} ${KEY_MESSAGES.reactivationNeeds(level)}`
    : why;
}

export const nextKeyStatus = (status: KeyStatus): KeyStatus => (status === 'active' ? 'inactive' : 'active');

/** The list failed: a refusal says why (e.g. the unauthorised message), anything else the fetch text. */
export function keyListFailureText(error: unknown): string {
  if (error instanceof ApiError && error.status === 403 && error.serverMessage) return error.serverMessage;
  return MESSAGES.cannotFetch;
}

/** Generating or toggling failed: the server's message, 'Please try after sometime.' offline. */
export function keyActionFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return error instanceof Error ? error.message : String(error);
}
