// @vitest-environment happy-dom
/**
 * Device Details' failed automated actions, over a fake API client: an ADMIN sees each failed collections
 * action of the device with its status (Retrying (n of N), Failed) and why; a device with none shows no
 * panel; a USER sees no panel and the console asks nothing.
 */
import type { FailedAction, Session } from '@lendlock/contract';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import { DeviceFailuresPanel } from './DeviceFailuresPanel';
import { FAILURE_LABELS as L } from './labels';

const IMEI = '356938035643809';

const failed = (overrides: Partial<FailedAction>): FailedAction => ({
  id: 1,
  imei: IMEI,
  loanRef: 'LN-1',
  action: 'LOCK',
  rule: 'collections v1: lock after 5 days overdue',
  actionDate: '2030-03-09',
  state: 'FAILED',
  attempts: 4,
  maxAttempts: 4,
  retryAt: null,
  result: 'simulated failure',
  transactionId: 'tx-1',
  ...overrides,
});

function server(items: FailedAction[]) {
  return fakeApi((script) => {
    if (script === `v2/collections/failures?imei=${IMEI}`) return { status: 'success', items };
    throw new Error(`unexpected call ${script}`);
  });
}

beforeEach(() => {
  if (!('fonts' in document))
    Object.defineProperty(document, 'fonts', {
      configurable: true,
      value: { addEventListener: () => undefined, removeEventListener: () => undefined },
    });
});
afterEach(() => cleanup());

describe('the failed automated actions panel', { timeout: 30_000 }, () => {
  it('an ADMIN sees each failed action, retrying or given up, with why', async () => {
    const { api } = server([
      failed({
        id: 2,
        action: 'UNLOCK',
        state: 'RETRYING',
        attempts: 1,
        retryAt: '2030-03-10T05:00:00.000Z',
      }),
      failed({ id: 1 }),
    ]);
    renderWithServices(<DeviceFailuresPanel imei={IMEI} />, { api });
    const panel = await screen.findByTestId('device-failures');
    expect(within(panel).getByText(L.title)).toBeTruthy();
    expect(within(panel).getByText('Retrying (1 of 4)')).toBeTruthy();
    expect(within(panel).getByText('Failed')).toBeTruthy();
    expect(within(panel).getAllByText('simulated failure')).toHaveLength(2);
  });

  it('shows nothing for a device with no failed action', async () => {
    const { api, calls } = server([]);
    renderWithServices(<DeviceFailuresPanel imei={IMEI} />, { api });
    await waitFor(() => expect(calls).toHaveLength(1));
    expect(screen.queryByTestId('device-failures')).toBeNull();
  });

  it('a USER sees no panel and nothing is asked', async () => {
    const { api, calls } = server([failed({})]);
    const user: Session = { ...TEST_SESSION, userlevel: 'USER' };
    renderWithServices(<DeviceFailuresPanel imei={IMEI} />, { api, session: user });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByTestId('device-failures')).toBeNull();
    expect(calls).toEqual([]);
  });
});
