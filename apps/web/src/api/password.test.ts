import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { noFile } from '../test/fakeApi';
import type { ApiCallOptions, ApiClient } from './client';
import { requestPasswordReset, resetPassword } from './password';

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

describe('password api', () => {
  it('forgotPassword.php gets the email, without the session key', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: MESSAGES.resetLinkSent });
    await expect(requestPasswordReset(api, 'a@lendlock.com')).resolves.toEqual({
      status: 'success',
      message: MESSAGES.resetLinkSent,
    });
    expect(calls[0]).toMatchObject({
      script: 'forgotPassword',
      options: { method: 'POST', auth: false, body: { email: 'a@lendlock.com' } },
    });
  });

  it('reset_password.php gets the token and the new password, without the session key', async () => {
    const { api, calls } = fakeApi({ status: 'success', message: MESSAGES.passwordResetSuccess });
    await resetPassword(api, { token: 'tok', newPassword: 'NewSecret#1' });
    expect(calls[0]).toMatchObject({
      script: 'reset_password',
      options: { method: 'POST', auth: false, body: { token: 'tok', newPassword: 'NewSecret#1' } },
    });
  });

  it('a reply whose status is not success fails with its message', async () => {
    const { api } = fakeApi({ status: 'error', message: MESSAGES.resetTokenInvalid });
    await expect(resetPassword(api, { token: 'tok', newPassword: 'x' })).rejects.toMatchObject({
      serverMessage: MESSAGES.resetTokenInvalid,
    });
  });
});
