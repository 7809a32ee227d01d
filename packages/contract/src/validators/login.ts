import { MESSAGES } from '../messages';

export interface LoginForm {
  email: string;
  password: string;
}

/** Login: email-or-phone and password are required. Returns the message to show, or null. */
export function validateLoginForm(form: LoginForm): string | null {
  if (form.email.trim() === '' || form.password === '') return MESSAGES.loginRequired;
  return null;
}

const PHONE = /^\d{10}$/;

/** What the login field holds: a 10-digit phone or (anything else) an email. */
export function loginIdentifierKind(value: string): 'phone' | 'email' {
  return PHONE.test(value.trim()) ? 'phone' : 'email';
}
