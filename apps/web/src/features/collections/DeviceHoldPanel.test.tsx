// @vitest-environment happy-dom
/**
 * Device Details' collections hold, over a fake API client: an ADMIN holds the device with a reason (a
 * missing reason is refused before any call) and then sees who held it; a USER sees no hold panel and the
 * console asks nothing about holds.
 */
import { COLLECTIONS_MESSAGES, type Hold, type Session } from '@lendlock/contract';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import { DeviceHoldPanel } from './DeviceHoldPanel';
import { HOLD_LABELS as L } from './labels';

const IMEI = '356938035643809';

function server() {
  let held: Hold | null = null;
  return fakeApi((script, body) => {
    if (script === `v2/collections/holds?imei=${IMEI}`)
      return { status: 'success', items: held ? [held] : [] };
    if (script === `v2/collections/holds/${IMEI}`) {
      const { reason } = body as { reason: string };
      held = {
        imei: IMEI,
        reason,
        heldBy: 'agent@lendlock.com',
        heldAt: '2030-03-09T10:00:00.000Z',
        retailerPhone: null,
      };
      return { status: 'success', message: COLLECTIONS_MESSAGES.holdSet, hold: held };
    }
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
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('the device hold panel', { timeout: 30_000 }, () => {
  it('an ADMIN holds the device with a reason and sees the hold', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<DeviceHoldPanel imei={IMEI} />, { api });
    const panel = await screen.findByTestId('device-hold');
    await within(panel).findByText(L.notHeld);

    await user.click(within(panel).getByRole('button', { name: L.hold }));
    expect(await within(panel).findByText(COLLECTIONS_MESSAGES.reasonRequired)).toBeTruthy();
    expect(calls.filter((c) => c.options.method === 'PUT')).toEqual([]);

    await user.type(within(panel).getByLabelText(L.reason, { exact: false }), 'customer in hospital');
    await user.click(within(panel).getByRole('button', { name: L.hold }));
    expect(await within(panel).findByText(COLLECTIONS_MESSAGES.holdSet)).toBeTruthy();
    await waitFor(() => expect(panel.getAttribute('data-held')).toBe('yes'));
    expect(within(panel).getByText(`${L.reason}: customer in hospital`)).toBeTruthy();
    expect(calls.filter((c) => c.options.method === 'PUT').map((c) => c.options.body)).toEqual([
      { reason: 'customer in hospital' },
    ]);
  });

  it('a USER sees no hold panel, and nothing is asked of the server', async () => {
    const { api, calls } = server();
    const user: Session = { ...TEST_SESSION, userlevel: 'USER' };
    renderWithServices(<DeviceHoldPanel imei={IMEI} />, { api, session: user });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(screen.queryByTestId('device-hold')).toBeNull();
    expect(calls).toEqual([]);
  });
});
