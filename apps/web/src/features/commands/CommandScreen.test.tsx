// @vitest-environment happy-dom
/**
 * The command screen as the operator sees it, rendered with Testing Library over a
 * fake API client: the single form's hint, the call it makes, the exact success alert and the live
 * status that follows, the server's refusal alerted as-is, and Release's confirmation.
 */
import { commandForScreen, MESSAGES, type Screen, screenByName } from '@lendlock/contract';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import CommandScreen from './CommandScreen';
import { COMMAND_LABELS } from './labels';

const IMEI = '356938035643809';

const screenOf = (name: string) => screenByName(name) as Screen;

/** The server of a screen with no incomplete batch; `command` answers locknotification. */
function server(command: () => unknown, status = 'DELIVERED') {
  return fakeApi((script) => {
    if (script === 'v2/batch/current') return { status: 'success', batch: null };
    if (script === 'locknotification') return command();
    if (script === 'v2/commandStatus')
      return {
        status: 'success',
        command: { transactionId: 'tx-1', imei1: IMEI, command: 'LOCK', status, result: null },
      };
    throw new Error(`unexpected call ${script}`);
  });
}

const sent = () => ({ status: 'success', message: 'ok', transactionId: 'tx-1' });

let alert: ReturnType<typeof vi.fn>;
let confirm: ReturnType<typeof vi.fn>;
beforeEach(() => {
  alert = vi.fn();
  confirm = vi.fn(() => true);
  vi.stubGlobal('alert', alert);
  vi.stubGlobal('confirm', confirm);
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

async function submitImei(imei: string) {
  const user = userEvent.setup();
  const form = screen.getByTestId('single-form');
  await user.type(within(form).getByLabelText(COMMAND_LABELS.imei, { exact: false }), imei);
  await user.click(within(form).getByRole('button', { name: COMMAND_LABELS.submit }));
}

describe('the command screen', () => {
  it('shows the screen title, the single form and the batch card', async () => {
    const { api } = server(sent);
    renderWithServices(<CommandScreen screen={screenOf('lockDevice')} />, { api });
    expect(screen.getByRole('heading', { name: 'Lock Device: Single / Batch Upload' })).toBeTruthy();
    expect(within(screen.getByTestId('single-form')).getByText(COMMAND_LABELS.single)).toBeTruthy();
    expect(await screen.findByText('Batch Upload')).toBeTruthy();
  });

  it('refuses an IMEI that is not 15 digits with the spec hint, and calls nothing', async () => {
    const { api, calls } = server(sent);
    renderWithServices(<CommandScreen screen={screenOf('lockDevice')} />, { api });
    await submitImei('12345');
    expect(await screen.findByText(MESSAGES.imeiHint)).toBeTruthy();
    expect(calls.map((c) => c.script)).not.toContain('locknotification');
    expect(alert).not.toHaveBeenCalled();
  });

  it('sends the command, alerts the exact success message and follows its live status', async () => {
    const { api, calls } = server(sent);
    renderWithServices(<CommandScreen screen={screenOf('lockDevice')} />, { api });
    await submitImei(IMEI);

    await waitFor(() => expect(alert).toHaveBeenCalledWith('Lock initiated  successfully.'));
    expect(calls.find((c) => c.script === 'locknotification')?.options.body).toEqual({
      imei: IMEI,
      action: 'lock',
      user: TEST_SESSION.email,
    });
    expect(await screen.findByText(`Lock → ${IMEI}`)).toBeTruthy();
    const badge = screen.getByTestId('command-status');
    await waitFor(() => expect(badge.textContent).toBe('delivered'));
    expect(badge.getAttribute('data-status')).toBe('DELIVERED');
    expect(calls.find((c) => c.script === 'v2/commandStatus')?.options.body).toEqual({
      transactionId: 'tx-1',
    });
    // The form is cleared for the next IMEI.
    expect((screen.getByLabelText(COMMAND_LABELS.imei, { exact: false }) as HTMLInputElement).value).toBe('');
  });

  it("alerts the server's refusal as-is and shows no live status", async () => {
    const { api } = server(() => {
      throw new ApiError(400, { status: 'error', message: 'Device not found' });
    });
    renderWithServices(<CommandScreen screen={screenOf('lockDevice')} />, { api });
    await submitImei(IMEI);
    await waitFor(() => expect(alert).toHaveBeenCalledWith('Device not found'));
    expect(screen.queryByTestId('command-status')).toBeNull();
  });

  it('asks before de-enrolling a formatted device, and sends nothing when the operator declines', async () => {
    const formatted = commandForScreen('formattedDevice');
    confirm.mockReturnValueOnce(false);
    const { api, calls } = server(sent);
    renderWithServices(<CommandScreen screen={screenOf('formattedDevice')} />, { api });
    await submitImei(IMEI);
    expect(confirm).toHaveBeenCalledWith(formatted?.confirm);
    expect(formatted?.confirm).toMatch(/cannot be undone/);
    expect(calls.map((c) => c.script)).toEqual([]);
  });

  it('asks before a release, and sends nothing when the operator declines', async () => {
    const release = commandForScreen('releaseDevice');
    confirm.mockReturnValueOnce(false);
    const { api, calls } = server(sent);
    renderWithServices(<CommandScreen screen={screenOf('releaseDevice')} />, { api });
    await submitImei(IMEI);
    expect(confirm).toHaveBeenCalledWith('Are you sure you want to release this device?');
    expect(calls.map((c) => c.script)).not.toContain('locknotification');

    await userEvent.setup().click(screen.getByRole('button', { name: COMMAND_LABELS.submit }));
    await waitFor(() => expect(alert).toHaveBeenCalledWith(release?.successMessage));
    expect(calls.find((c) => c.script === 'locknotification')?.options.body).toMatchObject({
      imei: IMEI,
      action: 'release',
    });
  });
});
