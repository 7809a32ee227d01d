/**
 * User Management calls: `getUsers.php`, `getPermissions.php`, `addUser.php`, `updateUser.php`,
 * `updateUserStatus.php` and `updateLoginStatus.php`. ADMIN and SUPERADMIN sessions only.
 */
import {
  type AddUserRequest,
  type ConsoleUser,
  getPermissionsResponseSchema,
  getUsersResponseSchema,
  type Permission,
  type StatusMessage,
  statusMessageSchema,
  type UpdateUserRequest,
  type UserStatus,
} from '@lendlock/contract';
import { type ApiClient, ApiError } from './client';

/** TanStack Query keys of this resource (the list calls take no parameter). */
export const userQueryKeys = {
  all: ['users'] as const,
  list: () => [...userQueryKeys.all, 'list'] as const,
  permissions: () => ['permissions', 'list'] as const,
};

/** A `{status, message}` reply; anything but 'success' is a failure carrying the server's message. */
function parseSuccess(body: unknown): StatusMessage {
  const reply = statusMessageSchema.parse(body);
  if (reply.status !== 'success') throw new ApiError(200, body);
  return reply;
}

export function getUsers(api: ApiClient, signal?: AbortSignal): Promise<ConsoleUser[]> {
  return api.call('getUsers', {
    parse: (body) => getUsersResponseSchema.parse(body).items,
    ...(signal ? { signal } : {}),
  });
}

export function getPermissions(api: ApiClient, signal?: AbortSignal): Promise<Permission[]> {
  return api.call('getPermissions', {
    parse: (body) => getPermissionsResponseSchema.parse(body).permissions,
    ...(signal ? { signal } : {}),
  });
}

export function addUser(api: ApiClient, user: AddUserRequest): Promise<StatusMessage> {
  return api.call('addUser', { method: 'POST', body: user, parse: parseSuccess });
}

export function updateUser(api: ApiClient, user: UpdateUserRequest): Promise<StatusMessage> {
  return api.call('updateUser', { method: 'POST', body: user, parse: parseSuccess });
}

/** Enables (ACTIVE) or disables (INACTIVE) a user; disabling also ends their sessions. */
export function updateUserStatus(
  api: ApiClient,
  change: { email: string; status: UserStatus },
): Promise<StatusMessage> {
  return api.call('updateUserStatus', { method: 'POST', body: change, parse: parseSuccess });
}

/**
 * Forced logout: ends every session of the user at once (their login status becomes LOGOUT); with
 * `deactivateKeys` their API keys are switched off too. Without it the body is the spec's `{email}`.
 */
export function forceLogout(
  api: ApiClient,
  email: string,
  options: { deactivateKeys?: boolean } = {},
): Promise<StatusMessage> {
  const body = options.deactivateKeys ? { email, deactivateKeys: true } : { email };
  return api.call('updateLoginStatus', { method: 'POST', body, parse: parseSuccess });
}
