import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../../api/client';
import { RESET_REDIRECT_MS, resetPasswordFailureText, validateResetPassword } from './resetPassword';

const draft = { token: 'tok_abcdefghijklmnop', password: 'NewSecret#1', confirm: 'NewSecret#1' };

describe('Reset Your Password validate()', () => {
  it('accepts a token and two equal passwords of the configured length', () => {
    expect(validateResetPassword(draft, 8)).toBeNull();
  });

  it.each([undefined, '', '  '])('a missing token (%j) asks for a new link', (token) => {
    expect(validateResetPassword({ ...draft, token }, 8)).toBe(MESSAGES.resetTokenMissing);
  });

  it("different passwords: 'Passwords do not match.'", () => {
    expect(validateResetPassword({ ...draft, confirm: 'NewSecret#2' }, 8)).toBe(MESSAGES.passwordsDoNotMatch);
  });

  it('the token is checked first, then the match, then the length', () => {
    expect(validateResetPassword({ token: '', password: 'a', confirm: 'b' }, 8)).toBe(
      MESSAGES.resetTokenMissing,
    );
    expect(validateResetPassword({ ...draft, password: 'a', confirm: 'b' }, 8)).toBe(
      MESSAGES.passwordsDoNotMatch,
    );
    expect(validateResetPassword({ ...draft, password: 'short', confirm: 'short' }, 8)).toBe(
      'Password must be at least 8 characters',
    );
    expect(validateResetPassword({ ...draft, password: '', confirm: '' }, 8)).toBe('Password is required');
  });
});

describe('Reset Your Password failure texts', () => {
  it("shows the server's refusal as it is", () => {
    const refused = new ApiError(400, { status: 'error', message: MESSAGES.resetTokenInvalid });
    expect(resetPasswordFailureText(refused)).toBe(MESSAGES.resetTokenInvalid);
  });

  it("otherwise 'An error occurred. Please try again.' plus the error", () => {
    expect(resetPasswordFailureText(new NetworkError(new Error('offline')))).toBe(
      `${MESSAGES.passwordFlowError} Network request failed`,
    );
  });

  it('redirects to /login 3000 ms after a successful reset', () => {
    expect(RESET_REDIRECT_MS).toBe(3000);
  });
});
