import { MESSAGES, type Session } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApiClient, NetworkError } from './client';
import {
  commandFailureText,
  fetchBatchStatus,
  fetchCommandStatus,
  sendCommand,
  sendDeviceAction,
  sendFormattedDevice,
} from './commands';

const IMEI = '356938035643809';

/** A client over a fake fetch answering `reply` with `status`; the envelope is plain JSON here. */
function clientAnswering(reply: unknown, status = 200) {
  const requests: { path: string; body: unknown }[] = [];
  const end = vi.fn();
  const onAuthorizationFailed = vi.fn();
  const api = createApiClient({
    config: { apiBase: '/api/', keyApiBase: '/keyapi/' },
    codec: {
      seal: async (value) => ({ payload: JSON.stringify(value), transactionId: '00' }),
      open: async (envelope) => JSON.parse((envelope as { payload: string }).payload),
    },
    sessions: { get: () => ({ token: 't' }) as Session, end },
    onAuthorizationFailed,
    fetch: async (input, init) => {
      const sealed = JSON.parse(String(init?.body ?? 'null')) as { payload: string } | null;
      requests.push({
        // What the browser sends: the path, never the fragment.
        path: new URL(String(input), 'http://console.test').pathname,
        body: sealed ? JSON.parse(sealed.payload) : null,
      });
      return new Response(JSON.stringify(reply), { status });
    },
  });
  return { api, requests, end, onAuthorizationFailed };
}

const accepted = { status: 'success', message: 'Lock initiated  successfully.', transactionId: 'tx-1' };

describe('commands api', () => {
  it('sends a single command to locknotification.php and returns its transactionId', async () => {
    const { api, requests } = clientAnswering(accepted);
    const body = { imei: IMEI, action: 'lock', user: 'ops@lendlock.com' };
    await expect(sendCommand(api, body)).resolves.toEqual(accepted);
    expect(requests).toEqual([{ path: '/api/locknotification.php', body }]);
  });

  it('de-enrolls a formatted device through formattedDevice.php with action formatteddevice', async () => {
    const { api, requests } = clientAnswering({ ...accepted, message: 'x' });
    await sendFormattedDevice(api, { imei: IMEI, user: 'ops@lendlock.com' });
    expect(requests).toEqual([
      {
        path: '/api/formattedDevice.php',
        body: { imei: IMEI, user: 'ops@lendlock.com', action: 'formatteddevice' },
      },
    ]);
  });

  it('sends a device action to adminlocknotification.php; ALL answers with a batch', async () => {
    const reply = {
      status: 'success',
      message: 'Device Action initiated successfully.',
      batchId: 3,
      total: 9,
    };
    const { api, requests } = clientAnswering(reply);
    await expect(
      sendDeviceAction(api, { imei: 'ALL', action: 'REBOOT', user: 'root@lendlock.com' }),
    ).resolves.toEqual(reply);
    expect(requests[0]?.path).toBe('/api/adminlocknotification.php');
  });

  it('follows a command at exactly /api/v2/commandStatus and a batch at /api/v2/batchStatus', async () => {
    const command = { transactionId: 'tx-1', imei1: IMEI, command: 'LOCK', status: 'SENT', result: null };
    const first = clientAnswering({ status: 'success', command });
    await expect(fetchCommandStatus(first.api, 'tx-1')).resolves.toEqual(command);
    expect(first.requests).toEqual([{ path: '/api/v2/commandStatus', body: { transactionId: 'tx-1' } }]);

    const second = clientAnswering({ status: 'success', total: 2, byStatus: { EXECUTED: 2 } });
    await expect(fetchBatchStatus(second.api, 3)).resolves.toMatchObject({ total: 2 });
    expect(second.requests).toEqual([{ path: '/api/v2/batchStatus', body: { batchId: 3 } }]);
  });

  it("a refusal surfaces the server's message", async () => {
    const { api } = clientAnswering({ status: 'error', code: 'CONFLICT', message: 'released' }, 409);
    const failure = await sendCommand(api, { imei: IMEI, action: 'lock' }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(commandFailureText(failure)).toBe('released');
    expect(commandFailureText(new NetworkError(new TypeError('offline')))).toBe(MESSAGES.tryAfterSometimeDot);
  });

  it("'Authorization Failed' is left to the caller when it asks (the dynamic action table)", async () => {
    const denied = { status: 'error', code: 'UNAUTHENTICATED', message: MESSAGES.authorizationFailed };
    const own = clientAnswering(denied, 401);
    await expect(
      sendCommand(own.api, { imei: IMEI, action: 'blockapp' }, { handleAuthorizationFailure: false }),
    ).rejects.toBeInstanceOf(ApiError);
    expect(own.end).not.toHaveBeenCalled();
    expect(own.onAuthorizationFailed).not.toHaveBeenCalled();

    const shared = clientAnswering(denied, 401);
    await expect(sendCommand(shared.api, { imei: IMEI, action: 'lock' })).rejects.toBeInstanceOf(ApiError);
    expect(shared.end).toHaveBeenCalledOnce();
  });
});
