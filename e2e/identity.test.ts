/**
 * A device's identity on Device Details in a real browser against a real server: a simulated agent
 * enrolls its device key; a registration of the same IMEI without proof from that key is refused (409)
 * and kept as a request; an ADMIN approves it after a confirmation and the phone with the claimed key
 * takes the device over; a USER with deviceDetails sees the requests but cannot decide them.
 */
import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import {
  type DeviceRegistration,
  ENROLLMENT_SECRET_HEADER,
  getPermissionsResponseSchema,
  REGISTRATION_CODES,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { profileFor, rng, SimulatedDevice } from '@lendlock/device-sim';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEVICE_LABELS } from '../apps/web/src/features/devices/labels';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { apiCall, apiToken, newEnrollmentSecret, randomSeed } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { watchDialogs } from './support/ui';
import { PASSWORD, type TestUser, USERS } from './support/users';

const enrollmentSecret = newEnrollmentSecret();
const seed = randomSeed();
/** A USER with the deviceDetails permission, added through addUser.php (e2e/support has none). */
const VIEWER: TestUser = {
  email: `identity-viewer-${Date.now()}@lendlock.com`,
  phone: `7${String(Date.now()).slice(-9)}`,
  level: 'USER',
  permissions: ['deviceDetails'],
};

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
let device: SimulatedDevice;
/** The key the refused registration claimed (a reinstalled agent's new key). */
let claimedKey: KeyObject;

const spki = (key: KeyObject) =>
  createPublicKey(key).export({ format: 'der', type: 'spki' }).toString('base64');

/** A registration of the enrolled IMEI on the enrollment secret alone: no nonce, no signature. */
async function registerWithoutProof(body: DeviceRegistration): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${server.baseUrl}/device/v1/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [ENROLLMENT_SECRET_HEADER]: enrollmentSecret },
    body: JSON.stringify(body),
  });
  const answer = (await response.json()) as { code?: string };
  return { status: response.status, ...(answer.code ? { code: answer.code } : {}) };
}

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  device = new SimulatedDevice(profileFor(seed, 0, rng(seed)), { server: server.baseUrl, enrollmentSecret });
  await device.register();
  expect(device.lastRegistration?.admittedBy).toBe('first');

  const token = await apiToken(server.baseUrl, USERS.admin);
  const { permissions } = getPermissionsResponseSchema.parse(
    await apiCall(server.baseUrl, token, '/api/getPermissions.php'),
  );
  const deviceDetails = permissions.find((p) => p.permission_name === 'deviceDetails');
  if (!deviceDetails) throw new Error('no deviceDetails permission');
  await apiCall(server.baseUrl, token, '/api/addUser.php', {
    email: VIEWER.email,
    phone: VIEWER.phone,
    password: PASSWORD,
    permissions: [deviceDetails.id],
  });
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Signs in, opens Device Details, types the IMEI and waits for the identity panel's key line. */
async function openIdentity(page: Page, user: TestUser) {
  await signIn(page, codec, user);
  await page.goto('/deviceDetails');
  await page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
  await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(device.imei);
  const panel = page.getByTestId('device-identity');
  await panel.getByRole('heading', { name: DEVICE_LABELS.identityTitle }).waitFor();
  await panel.getByTestId('identity-key').waitFor();
  return panel;
}

/** The texts of the requests table's body rows, cell by cell. */
async function requestRows(page: Page): Promise<string[][]> {
  const table = page.getByRole('table', { name: DEVICE_LABELS.requestsTitle });
  await table.waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
}

describe('Device identity', () => {
  it('an ADMIN sees the refused registration and approves it; the phone with the claimed key then registers', async () => {
    claimedKey = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey;
    const refused = await registerWithoutProof({ ...device.profile, publicKey: spki(claimedKey) });
    expect(refused).toEqual({ status: 409, code: REGISTRATION_CODES.needsApproval });

    const { page } = consolePage;
    const dialogs = watchDialogs(page);
    const panel = await openIdentity(page, USERS.admin);
    await expect(panel.getByTestId('identity-key').textContent()).resolves.toBe(DEVICE_LABELS.keyNotAttested);
    await expect(panel.getByTestId('identity-key-enrolled').textContent()).resolves.toMatch(
      /^Key enrolled \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/,
    );
    await panel.getByRole('heading', { name: DEVICE_LABELS.requestsTitle }).waitFor();
    const [row] = await requestRows(page);
    expect(row).toEqual([
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      expect.stringMatching(/\S/),
      expect.stringContaining(`${device.profile.brand} ${device.profile.model}`),
      DEVICE_LABELS.yes,
      '1',
      'PENDING',
      `${DEVICE_LABELS.approve}${DEVICE_LABELS.reject}`,
    ]);
    expect(row?.[2]).toContain(`IMEI 2: ${device.profile.imei2}`);

    const approve = panel.getByRole('button', { name: /^Approve the registration request of / });
    const decided = page.waitForResponse(
      (r) => new URL(r.url()).pathname === '/api/v2/reregistration/decide',
    );
    await approve.click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: DEVICE_LABELS.confirmApprove(device.imei),
    });
    expect((await decided).status()).toBe(200);
    const alert = await dialogs.next();
    expect(alert.type).toBe('alert');
    expect(alert.message).toMatch(
      new RegExp(`^Registration of ${device.imei} approved: the device may register once until `),
    );
    await panel.getByTestId('request-status').filter({ hasText: 'APPROVED' }).waitFor();
    expect(await panel.getByRole('button', { name: /^(Approve|Reject) / }).count()).toBe(0);
    await panel.getByText(`by ${USERS.admin.email} at `).waitFor();

    // The phone holding the claimed key registers once, admitted by the approval; the request is used.
    const successor = new SimulatedDevice(device.profile, {
      server: server.baseUrl,
      enrollmentSecret,
      deviceKey: claimedKey,
    });
    await successor.register();
    expect(successor.lastRegistration?.admittedBy).toBe('approval');
    await page.reload();
    await page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(device.imei);
    await panel.getByTestId('request-status').filter({ hasText: 'USED' }).waitFor();
    expect(dialogs.seen).toHaveLength(2);
  });

  it('a USER with deviceDetails sees the pending request but gets no Approve or Reject', async () => {
    // The original agent, its key now superseded, tries again on the secret alone: another request.
    const refused = await registerWithoutProof(device.profile);
    expect(refused).toEqual({ status: 409, code: REGISTRATION_CODES.needsApproval });

    const { page } = consolePage;
    const panel = await openIdentity(page, VIEWER);
    await expect(panel.getByTestId('identity-key').textContent()).resolves.toBe(DEVICE_LABELS.keyNotAttested);
    const rows = await requestRows(page);
    expect(rows.map((row) => row.at(-1))).toEqual(['PENDING', expect.stringMatching(/^USED/)]);
    expect(rows[0]?.[3]).toBe(DEVICE_LABELS.no);
    expect(await panel.getByRole('columnheader', { name: DEVICE_LABELS.requestDecision }).count()).toBe(0);
    expect(await panel.getByRole('button').count()).toBe(0);
  });
});
