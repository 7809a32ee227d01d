import { MFA_MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { readCode, readRecoveryCode, recoveryCodesText } from './mfaForms';

describe('two-factor forms', () => {
  it('takes six digits, with the space authenticator apps show', () => {
    expect(readCode('123456')).toEqual({ code: '123456' });
    expect(readCode(' 123 456 ')).toEqual({ code: '123456' });
    for (const bad of ['', '12345', '1234567', '12a456']) {
      expect(readCode(bad)).toEqual({ error: MFA_MESSAGES.codeFormat });
    }
  });

  it('takes any non-empty recovery code (the server knows which are right)', () => {
    expect(readRecoveryCode(' ab12c-de34f ')).toEqual({ recoveryCode: 'ab12c-de34f' });
    expect(readRecoveryCode('  ')).toEqual({ error: MFA_MESSAGES.recoveryFormat });
  });

  it('writes the codes one a line, under the account they are for', () => {
    expect(recoveryCodesText(['aaaaa-bbbbb', 'ccccc-ddddd'], 'a@lendlock.com', 'Lendlock')).toBe(
      'Lendlock recovery codes for a@lendlock.com\n' +
        'Each code works once, instead of a code from your authenticator app.\n\n' +
        'aaaaa-bbbbb\nccccc-ddddd\n',
    );
  });
});
