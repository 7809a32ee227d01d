/** The pure side of Key Management: the key name's validate(), the status toggle and failure texts. */
import { generateKeyRequestSchema, type KeyStatus, MESSAGES } from '@lendlock/contract';
import { ApiError, NetworkError } from '../../api/client';

/** The contract's rule for `key_name` (required, at most 100 characters); the first problem's message. */
export function validateKeyName(keyName: string): string | null {
  const result = generateKeyRequestSchema.shape.key_name.safeParse(keyName);
  return result.success ? null : (result.error.issues[0]?.message ?? MESSAGES.fillRequired);
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
