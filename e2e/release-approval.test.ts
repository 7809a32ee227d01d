/**
 * Release approvals in the browser: with the policy releasing "after an operator approves",
 * a loan paid off queues its device's release; an ADMIN finds it under Collections → Release approvals.
 * Cancelling the confirmation sends nothing; confirming it sends the RELEASE to the phone, which is
 * released, and the row moves to the approved list with who decided. A missed release keeps a paid-off
 * phone locked, so this follows it from the payment to the device.
 */
import { addDays, COLLECTIONS_MESSAGES, lenderClock } from '@lendlock/contract';
import { waitUntil } from '@lendlock/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COLLECTIONS_LABELS as L } from '../apps/web/src/pages/Collections/labels';
import { consolePagePerTest, screenTitle, signIn } from './support/browser';
import { apiCall, apiToken } from './support/fleet';
import { type ConsoleStand, startConsoleStand } from './support/stand';
import { USERS } from './support/users';

let stand: ConsoleStand;
const consolePage = consolePagePerTest(
  () => stand.browser,
  () => stand.server.baseUrl,
);
const today = lenderClock('Asia/Kolkata', new Date()).date;
const CUSTOMER = 'Customer Paid Up';

interface Release {
  id: number;
  imei: string;
  state: string;
  decidedBy: string | null;
}

async function releases(token: string, state = 'AWAITING_APPROVAL'): Promise<Release[]> {
  return (
    await apiCall<{ items: Release[] }>(
      stand.server.baseUrl,
      token,
      `/api/v2/collections/releases?state=${state}`,
    )
  ).items;
}

beforeAll(async () => {
  stand = await startConsoleStand({ devices: 1, env: { COLLECTIONS_WATCH_INTERVAL: '300ms' } });
}, 180_000);

afterAll(async () => {
  await stand?.stop();
});

describe('Release approvals', () => {
  it('a paid-off loan queues its release; an ADMIN approves it and the phone is released', async () => {
    const device = stand.fleet.devices[0];
    if (!device) throw new Error('no device');
    const imei = device.imei;
    const admin = await apiToken(stand.server.baseUrl, USERS.admin);
    const root = await apiToken(stand.server.baseUrl, USERS.superadmin);
    const loanRef = `E2E-REL-${imei.slice(-6)}`;
    await apiCall(stand.server.baseUrl, admin, '/api/v2/loans', {
      loans: [
        {
          loanRef,
          imei,
          customerName: CUSTOMER,
          currency: 'INR',
          instalments: [{ dueDate: addDays(today, 10), amount: '1499.50' }],
        },
      ],
    });
    // The SUPERADMIN turns collections on, releasing only after approval.
    const current = await apiCall<{ policy: Record<string, unknown> }>(
      stand.server.baseUrl,
      root,
      '/api/v2/collections/policy',
    );
    const saved = await fetch(`${stand.server.baseUrl}/api/v2/collections/policy`, {
      method: 'PUT',
      headers: { 'x-api-key': root, 'content-type': 'application/json' },
      body: JSON.stringify({ policy: { ...current.policy, enabled: true, release: 'APPROVAL' } }),
    });
    expect(saved.status, await saved.clone().text()).toBe(200);

    // The last instalment is paid: the release waits for an operator, the phone is not released.
    await apiCall(stand.server.baseUrl, admin, '/api/v2/payments', {
      paymentRef: `PAY-${loanRef}`,
      loanRef,
      amount: '1499.50',
      paidAt: new Date().toISOString(),
    });
    await waitUntil('the release queued', async () => (await releases(admin)).some((r) => r.imei === imei));
    expect(device.state.released).toBe(false);

    const { page } = consolePage;
    await signIn(page, stand.codec, USERS.admin);
    await page.getByTestId('nav-collections').click();
    await page.getByRole('heading', { name: screenTitle('collections'), level: 1 }).waitFor();
    await page.getByRole('tab', { name: L.tabs.releases }).click();
    const queue = page.getByRole('table', { name: L.releasesTitle });
    const row = queue.getByRole('row').filter({ hasText: imei });
    await row.getByRole('cell', { name: CUSTOMER, exact: true }).waitFor();
    await row.getByText(L.states.AWAITING_APPROVAL, { exact: true }).waitFor();
    const approve = row.getByRole('button', { name: L.approveOf(imei), exact: true });

    // Cancelled at the confirmation: nothing is sent.
    const cancelled = page.waitForEvent('dialog').then(async (dialog) => {
      const text = dialog.message();
      await dialog.dismiss();
      return text;
    });
    await approve.click();
    await expect(cancelled).resolves.toBe(L.confirmApprove(imei, CUSTOMER));
    expect((await releases(admin)).map((r) => r.imei)).toContain(imei);
    expect(device.state.released).toBe(false);

    // Confirmed: approved, sent, and the phone leaves the lender's control.
    const confirmed = page.waitForEvent('dialog').then((dialog) => dialog.accept());
    await approve.click();
    await confirmed;
    await page.getByRole('status').getByText(COLLECTIONS_MESSAGES.releaseApproved, { exact: true }).waitFor();
    await waitUntil('the phone released', async () => device.state.released);
    expect(await releases(admin)).toEqual([]);
    const approved = await releases(admin, 'APPROVED');
    expect(approved.map((r) => [r.imei, r.decidedBy])).toEqual([[imei, USERS.admin.email]]);

    // The approved list shows who decided.
    await page.getByLabel(L.state).selectOption('APPROVED');
    const decided = queue.getByRole('row').filter({ hasText: imei });
    await decided.getByText(USERS.admin.email).waitFor();
    await expect(decided.getByRole('button').count()).resolves.toBe(0);
  });
});
