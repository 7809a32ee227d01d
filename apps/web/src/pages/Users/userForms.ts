/**
 * The pure side of User Management: the Add and Edit modals' validate() (the contract's validators with
 * the runtime config's domains and password length), the request mapping (permission checkboxes → ids),
 * the failure texts of spec §8 and the screen's local update after a toggle.
 */
import {
  type AddUserRequest,
  type ConsoleUser,
  MESSAGES,
  type RuntimeConfig,
  type UpdateUserRequest,
  type UserStatus,
  validateAddUserForm,
  validateEditUserForm,
} from '@lendlock/contract';
import { ApiError, NetworkError } from '../../api/client';

export type UserRules = Pick<RuntimeConfig, 'allowedEmailDomains' | 'passwordMinLength'>;

export interface AddUserDraft {
  email: string;
  phone: string;
  password: string;
  /** Checked permission ids, as the checkboxes hold them (strings). */
  permissions: string[];
}

export interface EditUserDraft {
  id: number | null;
  email: string;
  phone: string;
  permissions: string[];
}

export const EMPTY_ADD_USER: AddUserDraft = { email: '', phone: '', password: '', permissions: [] };

/** The Add User modal: 'Invalid email domain', 'Enter a valid 10 digits number', then the password. */
export function validateAddUser(draft: AddUserDraft, rules: UserRules): string | null {
  return validateAddUserForm(draft, rules.allowedEmailDomains, rules.passwordMinLength);
}

/** The Edit User modal: 'Please fill all required fields.' without a user or email, then domain and phone. */
export function validateEditUser(draft: EditUserDraft, rules: UserRules): string | null {
  return validateEditUserForm(draft, rules.allowedEmailDomains);
}

/** Checkbox values → the numbers the calls send (spec §5), each once, in the order checked. */
export function toPermissionIds(values: readonly string[]): number[] {
  const ids = values.map(Number).filter((id) => Number.isInteger(id) && id > 0);
  return [...new Set(ids)];
}

export function toAddUserRequest(draft: AddUserDraft): AddUserRequest {
  return {
    email: draft.email.trim(),
    phone: draft.phone.trim(),
    password: draft.password,
    permissions: toPermissionIds(draft.permissions),
  };
}

export function toUpdateUserRequest(draft: EditUserDraft & { id: number }): UpdateUserRequest {
  return {
    id: draft.id,
    email: draft.email.trim(),
    phone: draft.phone.trim(),
    permissions: toPermissionIds(draft.permissions),
  };
}

/** The Edit modal's starting values for a row of the table. */
export function editDraftOf(
  user: Pick<ConsoleUser, 'id' | 'email' | 'phone' | 'permissions'>,
): EditUserDraft {
  return {
    id: user.id,
    email: user.email,
    phone: user.phone ?? '',
    permissions: user.permissions.map(String),
  };
}

const serverMessageOf = (error: unknown): string | undefined =>
  error instanceof ApiError ? error.serverMessage : undefined;

/** Spec §8 Add user: the server's message; 'Please try after sometime.' offline; else 'Error updating user.' */
export function addUserFailureText(error: unknown): string {
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return serverMessageOf(error) || MESSAGES.errorUpdatingUser;
}

/** Spec §8 Edit user: the server's message, or 'Error saving user. Please try again.' */
export function editUserFailureText(error: unknown): string {
  return serverMessageOf(error) || MESSAGES.errorSavingUser;
}

/** Spec §8 "Status and login toggle errors: alerted raw": the server's message, else the error itself. */
export function toggleFailureText(error: unknown): string {
  const message = serverMessageOf(error);
  if (message) return message;
  return error instanceof Error ? error.message : String(error);
}

export const nextUserStatus = (status: UserStatus): UserStatus =>
  status === 'ACTIVE' ? 'INACTIVE' : 'ACTIVE';

/** The table after a status change: disabling also ends the user's sessions (LOGOUT). */
export function withUserStatus(
  users: readonly ConsoleUser[],
  email: string,
  status: UserStatus,
): ConsoleUser[] {
  return users.map((user) =>
    user.email === email
      ? { ...user, userstatus: status, loginstatus: status === 'INACTIVE' ? 'LOGOUT' : user.loginstatus }
      : user,
  );
}

/** The table after a forced logout. */
export function withLoggedOut(users: readonly ConsoleUser[], email: string): ConsoleUser[] {
  return users.map((user) => (user.email === email ? { ...user, loginstatus: 'LOGOUT' } : user));
}
