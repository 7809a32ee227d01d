import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../../api/client';
import { forgotPasswordFailureText, validateForgotPassword } from './forgotPassword';

describe('Forgot Password validate()', () => {
  it.each(['', '   ', 'agent', 'agent@', 'agent@lendlock'])("'%s' is not an email address", (email) => {
    expect(validateForgotPassword(email)).toBe(MESSAGES.forgotEmailRequired);
  });

  it('accepts any email address (the domain is not checked here)', () => {
    expect(validateForgotPassword(' agent@example.com ')).toBeNull();
  });
});

describe('Forgot Password failure texts', () => {
  it("a refusal with a message is 'Error: ' + message", () => {
    const refused = new ApiError(429, { status: 'error', message: 'Too many requests' });
    expect(forgotPasswordFailureText(refused)).toBe(MESSAGES.errorPrefix('Too many requests'));
    expect(forgotPasswordFailureText(refused)).toBe('Error: Too many requests');
  });

  it("anything else is 'An error occurred. Please try again.' plus the error", () => {
    expect(forgotPasswordFailureText(new NetworkError(new TypeError('Failed to fetch')))).toBe(
      `${MESSAGES.passwordFlowError} Network request failed`,
    );
    expect(forgotPasswordFailureText(new ApiError(502, null))).toBe(`${MESSAGES.passwordFlowError} HTTP 502`);
  });
});
