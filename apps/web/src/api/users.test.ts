import { describe, expect, it } from 'vitest';
import { noFile } from '../test/fakeApi';
import type { ApiCallOptions, ApiClient } from './client';
import { ApiError } from './client';
import { addUser, forceLogout, getPermissions, getUsers, updateUser, updateUserStatus } from './users';

/** An ApiClient that records each call and answers with `reply` run through the call's parse. */
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

const row = {
  id: 3,
  email: 'agent@lendlock.com',
  phone: '9876543210',
  userlevel: 'USER',
  permissions: [1],
  permissions_id: [1],
  permission_names: ['lockDevice'],
  userstatus: 'ACTIVE',
  loginstatus: 'LOGOUT',
  retailer_phone: null,
  created_at: '2024-01-01T00:00:00.000Z',
};

describe('users api', () => {
  it('getUsers GETs getUsers.php and returns its items', async () => {
    const { api, calls } = fakeApi({ status: 'success', items: [row] });
    await expect(getUsers(api)).resolves.toEqual([row]);
    expect(calls[0]?.script).toBe('getUsers');
    expect(calls[0]?.options.method).toBeUndefined();
    expect(calls[0]?.options.body).toBeUndefined();
  });

  it('getUsers refuses a reply that is not the contract shape', async () => {
    const { api } = fakeApi({ status: 'success', items: [{ ...row, userstatus: 'MAYBE' }] });
    await expect(getUsers(api)).rejects.toThrow();
  });

  it('getPermissions returns the permission list', async () => {
    const permissions = [{ id: 1, permission_name: 'lockDevice' }];
    const { api, calls } = fakeApi({ status: 'success', permissions });
    await expect(getPermissions(api)).resolves.toEqual(permissions);
    expect(calls[0]?.script).toBe('getPermissions');
  });

  it('addUser and updateUser POST the form with permissions as numbers', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: 'User Added successfully' });
    await addUser(api, { email: 'a@lendlock.com', phone: '9876543210', password: 'x', permissions: [2, 4] });
    await updateUser(api, { id: 3, email: 'a@lendlock.com', phone: '9876543210', permissions: [4] });
    expect(calls.map((call) => [call.script, call.options.method, call.options.body])).toEqual([
      [
        'addUser',
        'POST',
        { email: 'a@lendlock.com', phone: '9876543210', password: 'x', permissions: [2, 4] },
      ],
      ['updateUser', 'POST', { id: 3, email: 'a@lendlock.com', phone: '9876543210', permissions: [4] }],
    ]);
  });

  it('a reply whose status is not success fails with the server message', async () => {
    const { api } = fakeApi({ status: 'error', message: 'A user with this email already exists' });
    const failure = addUser(api, {
      email: 'a@lendlock.com',
      phone: '9876543210',
      password: 'x',
      permissions: [],
    });
    await expect(failure).rejects.toBeInstanceOf(ApiError);
    await expect(failure).rejects.toMatchObject({ serverMessage: 'A user with this email already exists' });
  });

  it('the toggles POST updateUserStatus.php {email, status} and updateLoginStatus.php {email}', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: 'ok' });
    await updateUserStatus(api, { email: 'a@lendlock.com', status: 'INACTIVE' });
    await forceLogout(api, 'a@lendlock.com');
    await forceLogout(api, 'a@lendlock.com', { deactivateKeys: false });
    expect(calls.map((call) => [call.script, call.options.method, call.options.body])).toEqual([
      ['updateUserStatus', 'POST', { email: 'a@lendlock.com', status: 'INACTIVE' }],
      ['updateLoginStatus', 'POST', { email: 'a@lendlock.com' }],
      ['updateLoginStatus', 'POST', { email: 'a@lendlock.com' }],
    ]);
  });

  it('a forced logout that also switches the keys off adds deactivateKeys: true', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: 'ok' });
    await forceLogout(api, 'a@lendlock.com', { deactivateKeys: true });
    expect(calls[0]?.options.body).toEqual({ email: 'a@lendlock.com', deactivateKeys: true });
  });
});
