/** The two-factor forms' own checks, and the recovery-code file: pure, so tested on their own. */
import { MFA_MESSAGES, mfaCodeSchema } from '@lendlock/contract';

/** The six digits typed (spaces dropped, as apps show "123 456"), or the message to show. */
export function readCode(typed: string): { code: string } | { error: string } {
  const parsed = mfaCodeSchema.safeParse(typed);
  return parsed.success ? { code: parsed.data } : { error: MFA_MESSAGES.codeFormat };
}

export function readRecoveryCode(typed: string): { recoveryCode: string } | { error: string } {
  const value = typed.trim();
  return value === '' ? { error: MFA_MESSAGES.recoveryFormat } : { recoveryCode: value };
}

/** The text file offered at set-up: which account and service the codes are for, one code a line. */
export function recoveryCodesText(codes: readonly string[], account: string, service: string): string {
  return [
    `${service} recovery codes for ${account}`,
    'Each code works once, instead of a code from your authenticator app.',
    '',
    ...codes,
    '',
  ].join('\n');
}
