/**
 * Two-factor authentication calls (under `v2/mfa/`, beside the spec's): the second sign-in step, the
 * signed-in account's status and set-up, and User Management's list and reset.
 */
import {
  type MfaEnrolment,
  type MfaStatus,
  mfaConfirmResponseSchema,
  mfaEnrolmentResponseSchema,
  mfaStatusResponseSchema,
  mfaUsersResponseSchema,
  type Session,
  type StatusMessage,
  sessionSchema,
  statusMessageSchema,
} from '@lendlock/contract';
import type { ApiClient } from './client';

/** TanStack Query keys: the account's own state, its set-up, and the users whose MFA is on. */
export const mfaQueryKeys = {
  all: ['mfa'] as const,
  status: () => [...mfaQueryKeys.all, 'status'] as const,
  enrolment: () => [...mfaQueryKeys.all, 'enrolment'] as const,
  users: () => [...mfaQueryKeys.all, 'users'] as const,
};

/** Exchanges login.php's `mfaToken` and a code (or a recovery code) for the session. */
export function verifyMfa(
  api: ApiClient,
  request: { mfaToken: string } & ({ code: string } | { recoveryCode: string }),
): Promise<Session> {
  return api.call('v2/mfa/verify', {
    method: 'POST',
    body: request,
    auth: false,
    parse: (body) => sessionSchema.parse(body),
  });
}

export function getMfaStatus(api: ApiClient, signal?: AbortSignal): Promise<MfaStatus> {
  return api.call('v2/mfa/status', {
    parse: (body) => mfaStatusResponseSchema.parse(body),
    ...(signal ? { signal } : {}),
  });
}

/** A new secret for the account's app (replacing one not yet confirmed). */
export function startMfaEnrolment(api: ApiClient): Promise<MfaEnrolment> {
  return api.call('v2/mfa/enrol/start', {
    method: 'POST',
    body: {},
    parse: (body) => mfaEnrolmentResponseSchema.parse(body),
  });
}

/** Turns two-factor on with a code from the app; answers the ten recovery codes, shown this once. */
export function confirmMfaEnrolment(api: ApiClient, code: string): Promise<string[]> {
  return api.call('v2/mfa/enrol/confirm', {
    method: 'POST',
    body: { code },
    parse: (body) => mfaConfirmResponseSchema.parse(body).recoveryCodes,
  });
}

/** The ids of the users whose two-factor authentication is on (ADMIN and SUPERADMIN). */
export function getMfaUsers(api: ApiClient, signal?: AbortSignal): Promise<number[]> {
  return api.call('v2/mfa/users', {
    parse: (body) => mfaUsersResponseSchema.parse(body).userIds,
    ...(signal ? { signal } : {}),
  });
}

export function resetMfa(api: ApiClient, email: string): Promise<StatusMessage> {
  return api.call('v2/mfa/reset', {
    method: 'POST',
    body: { email },
    parse: (body) => statusMessageSchema.parse(body),
  });
}
