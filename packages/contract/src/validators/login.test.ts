import { describe, expect, it } from 'vitest';
import { MESSAGES } from '../messages';
import { loginIdentifierKind, validateLoginForm } from './login';

describe('login form', () => {
  it('requires both the email-or-phone and the password', () => {
    expect(validateLoginForm({ email: '', password: 'x' })).toBe(MESSAGES.loginRequired);
    expect(validateLoginForm({ email: '   ', password: 'x' })).toBe(MESSAGES.loginRequired);
    expect(validateLoginForm({ email: 'a@lendlock.com', password: '' })).toBe(MESSAGES.loginRequired);
    expect(validateLoginForm({ email: 'a@lendlock.com', password: 'x' })).toBeNull();
  });

  it('tells a 10-digit phone from an email', () => {
    expect(loginIdentifierKind('9876543210')).toBe('phone');
    expect(loginIdentifierKind(' 9876543210 ')).toBe('phone');
    expect(loginIdentifierKind('98765432100')).toBe('email');
    expect(loginIdentifierKind('ops@lendlock.com')).toBe('email');
  });
});
