/**
 * The pure side of User Management: the Add and Edit modals' validate() (the contract's validators with
 * the runtime config's domains and password length), the request mapping (level, permission checkboxes →
 * ids), what a permission is called and which ones a USER is offered, the failure texts and
 * the screen's local update after a toggle.
 */
import {
  type AddUserRequest,
  type ConsoleUser,
  grantableToUser,
  MESSAGES,
  type Permission,
  type RuntimeConfig,
  screenByName,
  type UpdateUserRequest,
  type UserLevel,
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
  /** USER unless a SUPERADMIN chose another. */
  userlevel: UserLevel;
}

export interface EditUserDraft {
  id: number | null;
  email: string;
  phone: string;
  permissions: string[];
  userlevel: UserLevel;
}

export const EMPTY_ADD_USER: AddUserDraft = {
  email: '',
  phone: '',
  password: '',
  permissions: [],
  userlevel: 'USER',
};

/** What a permission is called on the screen: its screen's name in the menu ('Lock Device'). */
export function permissionLabel(name: string): string {
  return screenByName(name)?.label ?? name;
}

/**
 * The permissions a USER is offered, in the server's order: not those that open nothing for a USER
 * (User Management, Device Action). ADMIN and SUPERADMIN are offered none: they pass every check.
 */
export function offeredPermissions(all: readonly Permission[]): Permission[] {
  return all.filter((permission) => grantableToUser(permission.permission_name));
}

/** The Add User modal: 'Invalid email domain', 'Enter a valid 10 digits number', then the password. */
export function validateAddUser(
  draft: Pick<AddUserDraft, 'email' | 'phone' | 'password'>,
  rules: UserRules,
): string | null {
  return validateAddUserForm(draft, rules.allowedEmailDomains, rules.passwordMinLength);
}

/** The Edit User modal: 'Please fill all required fields.' without a user or email, then domain and phone. */
export function validateEditUser(
  draft: Pick<EditUserDraft, 'id' | 'email' | 'phone'>,
  rules: UserRules,
): string | null {
  return validateEditUserForm(draft, rules.allowedEmailDomains);
}

/** Checkbox values → the numbers the calls send, each once, in the order checked. */
export function toPermissionIds(values: readonly string[]): number[] {
  const ids = values.map(Number).filter((id) => Number.isInteger(id) && id > 0);
  return [...new Set(ids)];
}

/** The permission ids to send: the checked ones for a USER; none for ADMIN and SUPERADMIN. */
const permissionsFor = (draft: Pick<AddUserDraft, 'permissions' | 'userlevel'>) =>
  draft.userlevel === 'USER' ? toPermissionIds(draft.permissions) : [];

/** The spec's request; `userlevel` only for another level than USER (a SUPERADMIN's choice). */
export function toAddUserRequest(draft: AddUserDraft): AddUserRequest {
  return {
    email: draft.email.trim(),
    phone: draft.phone.trim(),
    password: draft.password,
    permissions: permissionsFor(draft),
    ...(draft.userlevel === 'USER' ? {} : { userlevel: draft.userlevel }),
  };
}

/** The spec's request; `userlevel` only when it changes (`from`: the row's level). */
export function toUpdateUserRequest(
  draft: EditUserDraft & { id: number },
  from: UserLevel,
): UpdateUserRequest {
  return {
    id: draft.id,
    email: draft.email.trim(),
    phone: draft.phone.trim(),
    permissions: permissionsFor(draft),
    ...(draft.userlevel === from ? {} : { userlevel: draft.userlevel }),
  };
}

/**
 * The Edit modal's starting values for a row of the table: the permissions it offers that the user
 * holds (one that opens nothing for a USER is not offered, so saving drops it).
 */
export function editDraftOf(
  user: Pick<ConsoleUser, 'id' | 'email' | 'phone' | 'permissions' | 'permission_names' | 'userlevel'>,
): EditUserDraft {
  return {
    id: user.id,
    email: user.email,
    phone: user.phone ?? '',
    permissions: user.permissions
      .filter((_, index) => grantableToUser(user.permission_names[index] ?? ''))
      .map(String),
    userlevel: user.userlevel,
  };
}

const serverMessageOf = (error: unknown): string | undefined =>
  error instanceof ApiError ? error.serverMessage : undefined;

/** Add user: the server's message; 'Please try after sometime.' offline; else 'Error updating user.' */
export function addUserFailureText(error: unknown): string {
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return serverMessageOf(error) || MESSAGES.errorUpdatingUser;
}

/** Edit user: the server's message, or 'Error saving user. Please try again.' */
export function editUserFailureText(error: unknown): string {
  return serverMessageOf(error) || MESSAGES.errorSavingUser;
}

/** Status and login toggle errors are alerted raw: the server's message, else the error itself. */
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
