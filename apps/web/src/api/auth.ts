/** Sign-in calls: `login.php` and `logout.php`. */
import {
  LOGIN_CLIENT_HEADER,
  type LoginAnswer,
  type LoginRequest,
  loginAnswerSchema,
  type loginClientSchema,
} from '@lendlock/contract';
import type { ApiClient } from './client';

/** Which sign-in screen is used: `/superadmin/login` admits SUPERADMIN accounts only. */
export type LoginClient = ReturnType<typeof loginClientSchema.parse>;

/** The session, or the second step of an account with two-factor authentication on (`mfa_required`). */
export function login(api: ApiClient, form: LoginRequest, client: LoginClient): Promise<LoginAnswer> {
  return api.call('login', {
    method: 'POST',
    body: form,
    auth: false,
    headers: client === 'superadmin' ? { [LOGIN_CLIENT_HEADER]: 'superadmin' } : {},
    parse: (body) => loginAnswerSchema.parse(body),
  });
}

/** Ends the session server-side. `token` names a session that is no longer the current one. */
export async function logout(
  api: ApiClient,
  options: { token?: string; signal?: AbortSignal } = {},
): Promise<void> {
  await api.call('logout', {
    method: 'POST',
    ...options,
    // The caller clears the session and goes to /login whatever the answer.
    handleAuthorizationFailure: false,
  });
}
