import { describe, expect, it } from 'vitest';
import { noFile } from '../test/fakeApi';
import type { ApiCallOptions, ApiClient } from './client';
import { generateKey, updateKeyStatus, viewKeys } from './keys';

function fakeApi(reply: unknown) {
  const calls: { script: string; options: ApiCallOptions<unknown> }[] = [];
  const api: ApiClient = {
    async call<T>(script: string, options: ApiCallOptions<T> = {}): Promise<T> {
      calls.push({ script, options: options as ApiCallOptions<unknown> });
      return options.parse ? options.parse(reply) : (reply as T);
    },
    file: noFile,
  };
  return { api, calls };
}

const key = {
  id: 4,
  key_name: 'billing',
  status: 'active',
  created_at: '2024-01-01T00:00:00.000Z',
  user_id: 2,
  owner_email: 'admin@lendlock.com',
  last_used_at: null,
  deactivated_at: null,
  deactivated_by: null,
  deactivated_by_level: null,
  deactivated_reason: null,
};

describe('keys api', () => {
  it('lists keys from keymanagement/view_keys.php under the key API base', async () => {
    const { api, calls } = fakeApi([key]);
    await expect(viewKeys(api)).resolves.toEqual([key]);
    expect(calls[0]).toMatchObject({ script: 'keymanagement/view_keys', options: { base: 'keyApi' } });
  });

  it('generates a key with its name and the password typed again (the server takes the signed-in user)', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: 'generated', key: 'llk_secret', id: 9 });
    await expect(generateKey(api, { keyName: 'billing', password: 'Secret#123' })).resolves.toEqual({
      message: 'generated',
      key: 'llk_secret',
      id: 9,
    });
    expect(calls[0]).toMatchObject({
      script: 'generate_key',
      options: { base: 'keyApi', method: 'POST', body: { key_name: 'billing', password: 'Secret#123' } },
    });
  });

  it('toggles a key with {keyId, status}', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: 'Key deactivated successfully' });
    await updateKeyStatus(api, { keyId: 4, status: 'inactive' });
    expect(calls[0]).toMatchObject({
      script: 'keymanagement/update_key_status',
      options: { base: 'keyApi', method: 'POST', body: { keyId: 4, status: 'inactive' } },
    });
  });
});
