/**
 * Key Management calls, under the key API base: `keymanagement/view_keys.php`,
 * `generate_key.php` and `keymanagement/update_key_status.php`. Console sessions only.
 */
import {
  type ApiKey,
  generateKeyResponseSchema,
  type KeyStatus,
  type StatusMessage,
  statusMessageSchema,
  viewKeysResponseSchema,
} from '@lendlock/contract';
import type { ApiClient } from './client';

export const keyQueryKeys = {
  all: ['keys'] as const,
  list: () => [...keyQueryKeys.all, 'list'] as const,
};

/** The key-management calls live under their own base, the key API's. */
const base = 'keyApi' as const;

/** ADMIN and SUPERADMIN get every key; other users their own. The secret itself is never listed. */
export function viewKeys(api: ApiClient, signal?: AbortSignal): Promise<ApiKey[]> {
  return api.call('keymanagement/view_keys', {
    base,
    parse: (body) => viewKeysResponseSchema.parse(body),
    ...(signal ? { signal } : {}),
  });
}

export interface GeneratedKey {
  message: string;
  /** The secret, returned by this call only (only its hash is stored). */
  key: string;
  id: number;
}

/**
 * Creates a key for the signed-in user (the server takes `user_id` from the session when omitted), who
 * types the password again: a wrong one is refused with the server's message and creates nothing.
 */
export async function generateKey(
  api: ApiClient,
  request: { keyName: string; password: string },
): Promise<GeneratedKey> {
  const reply = await api.call('generate_key', {
    base,
    method: 'POST',
    body: { key_name: request.keyName, password: request.password },
    parse: (body) => generateKeyResponseSchema.parse(body),
  });
  return { message: reply.message, key: reply.key, id: reply.id };
}

export function updateKeyStatus(
  api: ApiClient,
  change: { keyId: number; status: KeyStatus },
): Promise<StatusMessage> {
  return api.call('keymanagement/update_key_status', {
    base,
    method: 'POST',
    body: change,
    parse: (body) => statusMessageSchema.parse(body),
  });
}
