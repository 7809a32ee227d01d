/**
 * Two-factor authentication in Chromium against the real server, with MFA_REQUIRED_LEVELS at its default
 * (ADMIN and SUPERADMIN; the other suites turn it off): an ADMIN is taken to set it up at first sign-in,
 * from then on signs in with 'Enter the 6-digit code', and a recovery code works once. A USER turns it on
 * from the account menu, and a SUPERADMIN resets it from User Management. The authenticator app is
 * otplib, the library the server checks codes with, reading the key the page shows.
 */
import { readFile } from 'node:fs/promises';
import { MFA_MESSAGES, SUPERADMIN_PREFIX } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { generate } from 'otplib';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { MFA_LABELS } from '../apps/web/src/features/mfa/labels';
import { consolePagePerTest, launchBrowser, serverCodec, submitLogin } from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { labelled, watchDialogs } from './support/ui';
import { PASSWORD, type TestUser, USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
// The QR code is a data: image: the console's strict CSP must admit it and block nothing else (checked after each test).
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ MFA_REQUIRED_LEVELS: 'ADMIN,SUPERADMIN' }),
    }),
    launchBrowser(),
  ]);
  codec = (await serverCodec(server.baseUrl)).codec;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const loginPath = (user: TestUser) => (user.level === 'SUPERADMIN' ? `${SUPERADMIN_PREFIX}/login` : '/login');
const homePath = (user: TestUser) => (user.level === 'SUPERADMIN' ? SUPERADMIN_PREFIX : '/');

/**
 * The next code the app shows. The current one may have been used a moment ago (setting up, or the last
 * sign-in), and a code is accepted once; the server takes the code of the next 30-second step too (for
 * phones whose clocks run ahead), so this is what a person would type after waiting for the code to change.
 */
const nextCode = (secret: string) => generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });

/** On /twoFactor: reads the key, turns two-factor on with a code, and returns the key and recovery codes. */
async function setUp(page: Page): Promise<{ secret: string; recoveryCodes: string[] }> {
  await page.waitForURL((url) => url.pathname === '/twoFactor');
  const qr = page.getByRole('img', { name: MFA_LABELS.qrAlt });
  await qr.waitFor();
  expect(await qr.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  const secret = ((await page.getByTestId('mfa-secret').textContent()) ?? '').replaceAll(' ', '');
  expect(secret).toMatch(/^[A-Z2-7]{32}$/);
  await labelled(page, MFA_MESSAGES.codePrompt).fill(await generate({ secret }));
  await page.getByRole('button', { name: MFA_LABELS.turnOn }).click();
  await page.getByRole('status').filter({ hasText: MFA_MESSAGES.enabled }).waitFor();
  const recoveryCodes = await page.getByTestId('recovery-codes').getByRole('listitem').allTextContents();
  expect(recoveryCodes).toHaveLength(10);
  return { secret, recoveryCodes };
}

async function signOut(page: Page): Promise<void> {
  await page.goto('/logout');
  await page.waitForURL((url) => url.pathname === '/login');
}

/** Password first; the console then asks 'Enter the 6-digit code'. */
async function passwordStep(page: Page, user: TestUser): Promise<void> {
  const attempt = await submitLogin(page, codec, user.email, PASSWORD, loginPath(user));
  expect(attempt.status).toBe(200);
  expect(attempt.body).toMatchObject({ status: 'mfa_required', message: MFA_MESSAGES.codePrompt });
  await labelled(page, MFA_MESSAGES.codePrompt).waitFor();
}

async function submitSecondStep(page: Page, label: string, value: string): Promise<number> {
  await labelled(page, label).fill(value);
  const answer = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v2/mfa/verify');
  await page.getByRole('button', { name: MFA_LABELS.verify }).click();
  return (await answer).status();
}

async function expectSignedIn(page: Page, user: TestUser): Promise<void> {
  await page.waitForURL((url) => url.pathname === homePath(user));
  await page.getByTestId('sidebar').waitFor();
}

describe('two-factor authentication', () => {
  it('an ADMIN sets it up at first sign-in, then signs in with a code; a recovery code works once', async () => {
    const { page } = consolePage;
    const admin = USERS.admin;

    // The password alone leads to the set-up, and nowhere else.
    const first = await submitLogin(page, codec, admin.email, PASSWORD);
    expect(first.body).toMatchObject({ status: 'success', mfa_enrolment_required: true });
    await page.getByTestId('mfa-required').waitFor();
    expect(await page.getByTestId('mfa-required').textContent()).toBe(MFA_LABELS.requiredNotice);
    await page.goto('/deviceDetails');
    await page.waitForURL((url) => url.pathname === '/twoFactor');

    const { secret, recoveryCodes } = await setUp(page);
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: MFA_LABELS.download }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(MFA_LABELS.recoveryFileName);
    const saved = await readFile((await download.path()) ?? '', 'utf8');
    for (const code of recoveryCodes) expect(saved).toContain(code);
    await page.getByRole('button', { name: MFA_LABELS.continue }).click();
    await expectSignedIn(page, admin);
    await signOut(page);

    // From now on: the password, then 'Enter the 6-digit code'.
    await passwordStep(page, admin);
    expect(await submitSecondStep(page, MFA_MESSAGES.codePrompt, await nextCode(secret))).toBe(200);
    await expectSignedIn(page, admin);
    await signOut(page);

    // A recovery code instead of a code: once.
    const recovery = recoveryCodes[0] as string;
    await passwordStep(page, admin);
    await page.getByRole('button', { name: MFA_MESSAGES.useRecoveryCode }).click();
    expect(await submitSecondStep(page, MFA_MESSAGES.recoveryPrompt, recovery)).toBe(200);
    await expectSignedIn(page, admin);
    await signOut(page);

    await passwordStep(page, admin);
    await page.getByRole('button', { name: MFA_MESSAGES.useRecoveryCode }).click();
    expect(await submitSecondStep(page, MFA_MESSAGES.recoveryPrompt, recovery)).toBe(401);
    await page.getByRole('alert').filter({ hasText: MFA_MESSAGES.codeInvalid }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(await page.getByTestId('sidebar').count()).toBe(0);
  });

  it('a USER turns it on from the account menu; a SUPERADMIN resets it from User Management', async () => {
    const { page } = consolePage;
    const dialogs = watchDialogs(page);
    const user = USERS.viewer;

    // A USER signs in as the spec has it, and may turn two-factor on.
    const plain = await submitLogin(page, codec, user.email, PASSWORD);
    expect(plain.body).toMatchObject({ status: 'success' });
    expect(plain.body).not.toHaveProperty('mfa_enrolment_required');
    await expectSignedIn(page, user);
    await page.getByRole('button', { name: MFA_LABELS.accountMenu(user.email) }).click();
    await page.getByRole('menuitem', { name: MFA_LABELS.title }).click();
    expect(await page.getByTestId('mfa-required').count()).toBe(0);
    await setUp(page);
    await page.getByRole('button', { name: MFA_LABELS.continue }).click();
    await expectSignedIn(page, user);
    await signOut(page);
    await passwordStep(page, user);

    // The SUPERADMIN (who must set two-factor up first) resets it.
    const root = USERS.superadmin;
    await submitLogin(page, codec, root.email, PASSWORD, loginPath(root));
    await setUp(page);
    await page.getByRole('button', { name: MFA_LABELS.continue }).click();
    await expectSignedIn(page, root);
    await page.goto(`${SUPERADMIN_PREFIX}/userManagement`);
    await page.getByRole('button', { name: MFA_LABELS.resetMfaOf(user.email) }).click();
    expect(await dialogs.next()).toEqual({
      type: 'confirm',
      message: MFA_LABELS.resetMfaConfirm(user.email),
    });
    expect(await dialogs.next()).toEqual({ type: 'alert', message: MFA_MESSAGES.reset });
    await page
      .getByRole('button', { name: MFA_LABELS.resetMfaOf(user.email) })
      .waitFor({ state: 'detached' });
    await signOut(page);

    // The USER is back to the password alone.
    const after = await submitLogin(page, codec, user.email, PASSWORD);
    expect(after.body).toMatchObject({ status: 'success' });
    await expectSignedIn(page, user);
  });
});
