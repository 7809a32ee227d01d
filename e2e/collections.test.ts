/**
 * Collections in the browser against the real server, with simulated devices and loans
 * imported through the API: one 10 days overdue, one due today, one due in 3 days, and another 10 days
 * overdue. The engine's workers are off (COLLECTIONS_WORKERS=off), so the plan shown is the plan computed,
 * not changed under the test by a daily run.
 *
 * A SUPERADMIN edits the policy (on, lock after 8 days), dry-runs today and sees the counts and the devices
 * (filtered by action, and the CSV downloaded), saves version 1 after a confirmation naming the changes
 * and finds it in the history; Today's Plan then shows the saved policy's counts; the kill switch, turned
 * on with a reason, makes the plan say nothing will run. An ADMIN reads the policy with no control to save
 * it (and the server refuses the call), cannot resume collections, and holds a device on Device Details,
 * which then shows in the holds list.
 */
import { readFileSync } from 'node:fs';
import { addDays, COLLECTIONS_MESSAGES, lenderClock } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOLD_LABELS } from '../apps/web/src/features/collections/labels';
import { DEVICE_LABELS } from '../apps/web/src/features/devices/labels';
import {
  ACTION_LABELS,
  COLLECTIONS_LABELS as L,
  SKIP_LABELS,
} from '../apps/web/src/pages/Collections/labels';
import { axeViolations } from './support/axe';
import { consolePagePerTest, fieldLabelled, screenTitle, signIn } from './support/browser';
import { apiCall, apiToken } from './support/fleet';
import type { RunningServer } from './support/server';
import { type ConsoleStand, startConsoleStand } from './support/stand';
import { labelled } from './support/ui';
import { USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let fleet: Fleet;
let stand: ConsoleStand;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
/** The devices' IMEIs: [10 days overdue, due today, due in 3 days, 10 days overdue]. */
let imeis: string[] = [];
/** Today in the default policy's zone (Asia/Kolkata), as the server plans it. */
const today = lenderClock('Asia/Kolkata', new Date()).date;

beforeAll(async () => {
  stand = await startConsoleStand({ devices: 4, env: { COLLECTIONS_WORKERS: 'off' } });
  ({ server, browser, codec, fleet } = stand);
  imeis = fleet.devices.map((device) => device.imei);
  const dues = [-10, 0, 3, -10];
  const token = await apiToken(server.baseUrl, USERS.admin);
  await apiCall(server.baseUrl, token, '/api/v2/loans', {
    loans: imeis.map((imei, i) => ({
      loanRef: `E2E-COLL-${i + 1}-${imei.slice(-4)}`,
      imei,
      customerName: `Customer ${i + 1}`,
      currency: 'INR',
      instalments: [{ dueDate: addDays(today, dues[i] ?? 0), amount: '1499.50' }],
    })),
  });
}, 180_000);

afterAll(async () => {
  await stand?.stop();
});

async function openCollections(page: Page) {
  await page.getByTestId('nav-collections').click();
  await page.getByRole('heading', { name: screenTitle('collections'), level: 1 }).waitFor();
}

/** The count shown for a row (an action or a reason) of a plan's count tables. */
async function countOf(plan: Locator, label: string): Promise<string> {
  const row = plan
    .getByRole('row')
    .filter({ has: plan.page().getByRole('cell', { name: label, exact: true }) });
  return (await row.getByRole('cell').nth(1).textContent()) ?? '';
}

describe('Collections screen', () => {
  it('a SUPERADMIN dry-runs and saves the policy, sees Today’s Plan, and stops everything with the kill switch', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.superadmin);
    await openCollections(page);

    // Today's Plan with the default policy (off): the kill switch runs, the policy says nothing is sent.
    const killSwitch = page.getByTestId('kill-switch');
    await expect(killSwitch.getByTestId('kill-switch-state').textContent()).resolves.toBe(L.running);
    await expect(page.getByTestId('today-plan').getByTestId('plan-halted').textContent()).resolves.toBe(
      L.policyOff,
    );

    // The policy: on, lock after 8 days overdue.
    await page.getByRole('tab', { name: L.tabs.policy }).click();
    await page.getByTestId('policy-fields').waitFor();
    await page.locator('label', { hasText: L.fields.enabled }).click();
    await expect(page.getByLabel(L.fields.enabled).isChecked()).resolves.toBe(true);
    await fieldLabelled(page, L.fields.lockAfterDaysOverdue).fill('8');

    // Dry run of the form's policy for today: two locks, one due reminder, one pre reminder.
    await expect(fieldLabelled(page, L.dryRunDate).inputValue()).resolves.toBe(today);
    await page.getByRole('button', { name: L.runDryRun, exact: true }).click();
    const dryRun = page.getByTestId('dry-run');
    await dryRun.waitFor();
    await expect(
      dryRun.getByRole('heading', { name: L.planTitle(today, 'Asia/Kolkata') }).count(),
    ).resolves.toBe(1);
    await expect(countOf(dryRun, ACTION_LABELS.LOCK)).resolves.toBe('2');
    await expect(countOf(dryRun, ACTION_LABELS.DUE)).resolves.toBe('1');
    await expect(countOf(dryRun, ACTION_LABELS.PRE)).resolves.toBe('1');
    await expect(dryRun.getByTestId('plan-halted').count()).resolves.toBe(0);

    // The devices, filtered by action: the two overdue ones are locked.
    await labelled(dryRun, L.show).selectOption('LOCK');
    await page.locator('[data-testid="dry-run"][data-filter="LOCK"][data-state="ready"]').waitFor();
    const items = dryRun.getByTestId('dry-run-items');
    await items.getByRole('cell', { name: imeis[0] as string, exact: true }).waitFor();
    await expect(items.getByRole('cell', { name: imeis[3] as string, exact: true }).count()).resolves.toBe(1);
    await expect(items.getByRole('cell', { name: imeis[1] as string, exact: true }).count()).resolves.toBe(0);

    // …and every device of that selection as the server's CSV.
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      dryRun.getByRole('button', { name: L.downloadCsv }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`collections-plan_${today}.csv`);
    const csv = readFileSync((await download.path()) as string, 'utf8');
    expect(csv.startsWith('\uFEFFIMEI,')).toBe(true);
    expect(csv).toContain(imeis[0]);
    expect(csv).toContain(imeis[3]);
    expect(csv).not.toContain(imeis[1]);

    // Save: the confirmation names each change; version 1 is in the history.
    await page.getByRole('button', { name: L.save }).click();
    const confirm = page.getByTestId('confirm-save');
    await expect(confirm.getByRole('listitem').allTextContents()).resolves.toEqual([
      'Policy: off → on',
      'Lock after days overdue: 5 → 8',
    ]);
    await confirm.getByRole('button', { name: L.confirmSave(1) }).click();
    await expect(page.getByTestId('policy-message').textContent()).resolves.toBe(
      COLLECTIONS_MESSAGES.policySaved(1),
    );
    const version1 = page.getByTestId('policy-history').locator('tr[data-version="1"]');
    await version1.waitFor();
    await expect(version1.getByRole('cell', { name: USERS.superadmin.email }).count()).resolves.toBe(1);
    await expect(version1.getByText('Lock after days overdue: 8').count()).resolves.toBe(1);

    // Today's Plan now plans the saved version.
    await page.getByRole('tab', { name: L.tabs.plan }).click();
    const todayPlan = page.getByTestId('today-plan');
    await todayPlan.getByText(L.version(1)).waitFor();
    await expect(countOf(todayPlan, ACTION_LABELS.LOCK)).resolves.toBe('2');
    await expect(todayPlan.getByTestId('plan-halted').count()).resolves.toBe(0);

    // The kill switch: a reason is required, then nothing will run.
    await killSwitch.getByRole('button', { name: L.stop }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: L.confirmStop }).click();
    await dialog.getByText(COLLECTIONS_MESSAGES.reasonRequired).waitFor();
    await labelled(dialog, L.reason).fill('wrong due dates imported');
    await dialog.getByRole('button', { name: L.confirmStop }).click();
    await expect(killSwitch.getByTestId('kill-switch-message').textContent()).resolves.toContain(
      COLLECTIONS_MESSAGES.killSwitchOn,
    );
    await page.locator('[data-testid="kill-switch"][data-state="on"]').waitFor();
    await expect(killSwitch.getByTestId('kill-switch-state').textContent()).resolves.toBe(L.stopped);
    await todayPlan.getByTestId('plan-halted').getByText(L.nothingRuns).waitFor();
    await expect(countOf(todayPlan, ACTION_LABELS.LOCK)).resolves.toBe('0');
    await expect(countOf(todayPlan, SKIP_LABELS.killSwitch)).resolves.not.toBe('0');
    await expect(killSwitch.getByRole('button', { name: L.resume }).count()).resolves.toBe(1);
  });

  it('every tab of the screen passes axe (WCAG 2.2 AA), the dry run shown and the kill switch on', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.superadmin);
    await openCollections(page);
    const problems: string[] = [];

    await page.getByTestId('today-plan').waitFor();
    await expect(page.locator('h1').count()).resolves.toBe(1);
    problems.push(...(await axeViolations(page, 'plan')));

    await page.getByRole('tab', { name: L.tabs.policy }).click();
    await page.getByTestId('policy-history').waitFor();
    await page.getByRole('button', { name: L.runDryRun, exact: true }).click();
    await page.getByTestId('dry-run-items').waitFor();
    problems.push(...(await axeViolations(page, 'policy')));
    await page.getByRole('button', { name: L.save }).click();
    await page.getByTestId('confirm-save').or(page.getByText(L.noChanges)).first().waitFor();
    problems.push(...(await axeViolations(page, 'policy, saving')));
    await page.keyboard.press('Escape');

    await page.getByRole('tab', { name: L.tabs.releases }).click();
    await page.getByTestId('release-mode').waitFor();
    problems.push(...(await axeViolations(page, 'releases')));

    await page.getByRole('tab', { name: L.tabs.holds }).click();
    await page.getByRole('heading', { name: L.holdsTitle }).waitFor();
    problems.push(...(await axeViolations(page, 'holds')));
    expect(problems).toEqual([]);
  });

  it('an ADMIN reads the policy but cannot save it or resume collections, and holds a device', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, USERS.admin);
    await openCollections(page);

    await page.getByRole('tab', { name: L.tabs.policy }).click();
    await page.getByTestId('policy-fields').waitFor();
    await page.getByText(L.readOnly).waitFor();
    await expect(page.getByRole('button', { name: L.save }).count()).resolves.toBe(0);
    await expect(page.getByLabel(L.fields.enabled).isDisabled()).resolves.toBe(true);

    // The server refuses it too, and nothing changes.
    const refused = await fetch(`${server.baseUrl}/api/v2/collections/policy`, {
      method: 'PUT',
      headers: { 'X-API-Key': session.token, 'content-type': 'application/json' },
      body: JSON.stringify({ policy: { ...(await currentPolicy(session.token)), enabled: false } }),
    });
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe(COLLECTIONS_MESSAGES.superadminOnly);
    await expect(currentVersion(session.token)).resolves.toBe(1);

    // Stopped by the SUPERADMIN: an ADMIN has no button to resume.
    await page.getByRole('tab', { name: L.tabs.plan }).click();
    const killSwitch = page.getByTestId('kill-switch');
    await killSwitch.getByText(L.resumeSuperadminOnly).waitFor();
    await expect(killSwitch.getByRole('button').count()).resolves.toBe(0);

    // Device Details: hold the device.
    const imei = imeis[2] as string;
    await page.getByTestId('nav-deviceDetails').click();
    await page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(imei);
    const panel = page.getByTestId('device-hold');
    await panel.getByText(HOLD_LABELS.notHeld).waitFor();
    await labelled(panel, HOLD_LABELS.reason).fill('customer in hospital');
    await panel.getByRole('button', { name: HOLD_LABELS.hold }).click();
    await panel.getByText(COLLECTIONS_MESSAGES.holdSet).waitFor();
    await panel.getByText(HOLD_LABELS.held, { exact: true }).waitFor();

    // …and it is in the holds list.
    await openCollections(page);
    await page.getByRole('tab', { name: L.tabs.holds }).click();
    const row = page.getByTestId('holds').getByRole('row').filter({ hasText: imei });
    await row.getByRole('cell', { name: 'customer in hospital' }).waitFor();
    await expect(row.getByRole('cell', { name: USERS.admin.email }).count()).resolves.toBe(1);
  });
});

async function currentPolicy(token: string): Promise<Record<string, unknown>> {
  const reply = await apiCall<{ policy: Record<string, unknown> }>(
    server.baseUrl,
    token,
    '/api/v2/collections/policy',
  );
  return reply.policy;
}

async function currentVersion(token: string): Promise<number> {
  const reply = await apiCall<{ version: number }>(server.baseUrl, token, '/api/v2/collections/policy');
  return reply.version;
}
