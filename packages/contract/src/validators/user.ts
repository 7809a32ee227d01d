import { MESSAGES } from '../messages';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function isEmail(value: string): boolean {
  return EMAIL.test(value.trim());
}

/** Add user / Edit user: the email must end with one of the allowed company domains. */
export function validateEmailDomain(email: string, allowedDomains: readonly string[]): string | null {
  const value = email.trim().toLowerCase();
  const domain = value.split('@').pop() ?? '';
  return isEmail(value) && allowedDomains.includes(domain) ? null : MESSAGES.invalidEmailDomain;
}

/** The phone is exactly 10 digits. */
export function validatePhone(phone: string): string | null {
  return /^\d{10}$/.test(phone.trim()) ? null : MESSAGES.invalidPhone;
}

/** The smallest PASSWORD_MIN_LENGTH a deployment may choose; 12 is the default (ASVS 5.0 V6.2.1). */
export const PASSWORD_MIN_LENGTH_FLOOR = 8;
export const PASSWORD_MIN_LENGTH_DEFAULT = 12;

/**
 * The password rule the console and the server share: a length, counted in characters (code points), and
 * no composition rule (ASVS 5.0 V6.2). The server also refuses breached and common passwords.
 */
export function validatePassword(password: string, minLength: number): string | null {
  if (password === '') return 'Password is required';
  return [...password].length < minLength ? `Password must be at least ${minLength} characters` : null;
}

export interface AddUserForm {
  email: string;
  phone: string;
  password: string;
}

/** The Add User modal's checks, in the order the spec lists them; the first failure's message. */
export function validateAddUserForm(
  form: AddUserForm,
  allowedDomains: readonly string[],
  minLength: number,
): string | null {
  return (
    validateEmailDomain(form.email, allowedDomains) ??
    validatePhone(form.phone) ??
    validatePassword(form.password, minLength)
  );
}

export interface EditUserForm {
  id: number | null | undefined;
  email: string;
  phone: string;
}

/** The Edit User modal: 'Please fill all required fields.' when the email or the user is missing. */
export function validateEditUserForm(form: EditUserForm, allowedDomains: readonly string[]): string | null {
  if (!form.id || form.email.trim() === '') return MESSAGES.fillRequired;
  return validateEmailDomain(form.email, allowedDomains) ?? validatePhone(form.phone);
}

/** Forgot password: 'Please enter a valid email address.' */
export function validateForgotPasswordForm(email: string): string | null {
  return isEmail(email) ? null : MESSAGES.forgotEmailRequired;
}

/** Reset password: the token must exist and the two passwords must match. */
export function validateResetPasswordForm(form: {
  token: string | null | undefined;
  password: string;
  confirm: string;
}): string | null {
  if (!form.token) return MESSAGES.resetTokenMissing;
  if (form.password !== form.confirm) return MESSAGES.passwordsDoNotMatch;
  return null;
}
