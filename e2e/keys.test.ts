/**
 * Key Management in the browser against the real server: Generate Key (the password asked again, the key
 * shown once, with a copy button), the keys table, a call authenticated by the key with its creator's
 * rights, deactivation refusing the key at its next request, why a key is off and who may switch it on.
 */
import {
  type ApiKey,
  generateKeyRequestSchema,
  generateKeyResponseSchema,
  KEY_MESSAGES,
  MESSAGES,
  SUPERADMIN_PREFIX,
  viewKeysResponseSchema,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { KEY_LABELS } from '../apps/web/src/pages/Keys/labels';
import { consolePagePerTest, launchBrowser, screenTitle, serverCodec, signIn } from './support/browser';
import { apiCall, apiToken } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { labelled, rowWith, watchDialogs } from './support/ui';
import { PASSWORD, type TestUser, USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: inject('templateDataDir') }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const isKeyCall = (script: string) => (r: { url(): string }) =>
  new URL(r.url()).pathname === `/keyapi/${script}.php`;
const bodyOf = async (response: Response): Promise<unknown> => codec.open(await response.json());

/** Signs in and opens Key Management; resolves with the keys the server listed. */
async function openKeys(page: Page, user: TestUser = USERS.admin): Promise<ApiKey[]> {
  await signIn(page, codec, user);
  const listed = page.waitForResponse(isKeyCall('keymanagement/view_keys'));
  await page.goto(user.level === 'SUPERADMIN' ? `${SUPERADMIN_PREFIX}/keyManagement` : '/keyManagement');
  await page.getByRole('heading', { name: screenTitle('keyManagement') }).waitFor();
  return viewKeysResponseSchema.parse(await bodyOf(await listed));
}

/** What an integrator does: a plain JSON call with the key in X-API-Key. */
async function callWithKey(key: string, path: string, body?: unknown) {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'X-API-Key': key, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The Generate Key dialog that asks for the password again. */
const passwordDialog = (page: Page) => page.getByRole('dialog', { name: KEY_LABELS.confirmPassword });

/** Types a key name, presses Generate Key and answers the password dialog; resolves with the reply. */
async function generateInBrowser(page: Page, keyName: string, password = PASSWORD): Promise<Response> {
  await labelled(page, KEY_LABELS.keyName).fill(keyName);
  await page.getByRole('button', { name: KEY_LABELS.generateKey }).click();
  const dialog = passwordDialog(page);
  await dialog.waitFor();
  await labelled(dialog, KEY_LABELS.password).fill(password);
  const generated = page.waitForResponse(isKeyCall('generate_key'));
  await dialog.getByRole('button', { name: KEY_LABELS.generateKey }).click();
  return generated;
}

const deviceDetails = (key: string) =>
  callWithKey(key, '/api/devicedetails.php', { imei: '123456789012345' });

describe('Key Management', () => {
  it('Generate Key needs a key name and sends nothing without one', async () => {
    const { page } = consolePage;
    await openKeys(page);
    const sent: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/keyapi/generate_key.php' && sent.push(r.url()));
    const required = generateKeyRequestSchema.shape.key_name.safeParse('  ').error?.issues[0]?.message;
    expect(required).toBe('Key name is required');

    await labelled(page, KEY_LABELS.keyName).fill('   ');
    await page.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    await page.getByText(required ?? '', { exact: true }).waitFor();
    expect(await passwordDialog(page).count()).toBe(0);
    expect(sent).toEqual([]);
  });

  it('Generate Key asks for the password again: empty, cancelled or wrong, nothing is created', async () => {
    const { page } = consolePage;
    const before = await openKeys(page);
    const sent: unknown[] = [];
    page.on('request', (r) => isKeyCall('generate_key')(r) && sent.push(r.url()));

    await labelled(page, KEY_LABELS.keyName).fill('Stolen session');
    await page.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    const dialog = passwordDialog(page);
    await dialog.getByText(KEY_LABELS.confirmPasswordHint, { exact: true }).waitFor();
    // Empty: the dialog says so and sends nothing.
    await dialog.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe('Password is required');
    // Cancel: the dialog closes, the name stays, nothing was sent.
    await dialog.getByRole('button', { name: KEY_LABELS.cancel }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect(labelled(page, KEY_LABELS.keyName).inputValue()).resolves.toBe('Stolen session');
    expect(sent).toEqual([]);

    // Wrong: the server refuses, the dialog shows its message, no key exists.
    const refused = await generateInBrowser(page, 'Stolen session', 'Wrong#Password1');
    expect(refused.status()).toBe(401);
    expect(await bodyOf(refused)).toMatchObject({ message: KEY_MESSAGES.wrongPassword });
    await expect(dialog.getByRole('alert').textContent()).resolves.toBe(KEY_MESSAGES.wrongPassword);
    expect(await page.getByTestId('new-key-notice').count()).toBe(0);
    const token = await apiToken(server.baseUrl, USERS.admin);
    const listed = await apiCall<ApiKey[]>(server.baseUrl, token, '/keyapi/keymanagement/view_keys.php');
    expect(listed.map((k) => k.id)).toEqual(before.map((k) => k.id));
    // The session is still valid: the console did not sign out.
    expect(new URL(page.url()).pathname).toBe('/keyManagement');

    // Right: the key is generated and the dialog closes.
    await labelled(dialog, KEY_LABELS.password).fill(PASSWORD);
    const generated = page.waitForResponse(isKeyCall('generate_key'));
    await dialog.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    expect((await generated).status()).toBe(200);
    await dialog.waitFor({ state: 'hidden' });
    await page.getByTestId('new-key-notice').waitFor();
    await rowWith(page, 'Stolen session').waitFor();
  });

  it('an ADMIN generates a key that is shown once with a copy button, listed without its secret', async () => {
    const { page, context } = consolePage;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const before = await openKeys(page);
    expect(before.map((k) => k.key_name)).not.toContain('Billing integration');

    const relisted = page.waitForResponse(isKeyCall('keymanagement/view_keys'));
    const reply = generateKeyResponseSchema.parse(
      await bodyOf(await generateInBrowser(page, 'Billing integration')),
    );
    expect(reply.key).toMatch(/^llk_[A-Za-z0-9_-]{40,}$/);

    const notice = page.getByTestId('new-key-notice');
    await expect(notice.getByTestId('new-key').textContent()).resolves.toBe(reply.key);
    await notice.getByText(reply.message, { exact: true }).waitFor();
    await notice.getByRole('button', { name: KEY_LABELS.copy }).click();
    await notice.getByRole('button', { name: KEY_LABELS.copied }).waitFor();
    await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(reply.key);
    await expect(labelled(page, KEY_LABELS.keyName).inputValue()).resolves.toBe('');

    // The list never carries the secret.
    const listedResponse = await relisted;
    const listed = viewKeysResponseSchema.parse(await bodyOf(listedResponse));
    expect(JSON.stringify(listed)).not.toContain(reply.key);
    const row = rowWith(page, 'Billing integration');
    await expect(row.getByRole('cell').allTextContents()).resolves.toEqual([
      'Billing integration',
      USERS.admin.email,
      'active',
      expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/),
      KEY_LABELS.never,
      KEY_LABELS.statusAction('active'),
    ]);

    // Shown once: after a reload the key is nowhere on the page.
    await page.reload();
    await rowWith(page, 'Billing integration').waitFor();
    expect(await page.getByTestId('new-key-notice').count()).toBe(0);
    expect(await page.content()).not.toContain(reply.key);
  });

  it('the key authenticates calls with its creator’s rights; deactivated it is refused, activated again it works', async () => {
    const { page } = consolePage;
    await openKeys(page);
    const { key } = generateKeyResponseSchema.parse(
      await bodyOf(await generateInBrowser(page, 'Collections partner')),
    );

    // An ADMIN's key may look up devices…
    await expect(deviceDetails(key)).resolves.toMatchObject({
      status: 200,
      body: { status: 'success', items: [] },
    });
    // …but never manages users or keys (console sessions only).
    await expect(callWithKey(key, '/api/getUsers.php')).resolves.toMatchObject({ status: 401 });
    await expect(callWithKey(key, '/keyapi/keymanagement/view_keys.php')).resolves.toMatchObject({
      status: 401,
    });

    // The table shows when it was last used.
    await page.reload();
    const row = rowWith(page, 'Collections partner');
    await expect(row.getByRole('cell').nth(4).textContent()).resolves.toMatch(/^\d{4}-\d{2}-\d{2} /);

    const toggled = page.waitForResponse(isKeyCall('keymanagement/update_key_status'));
    await row
      .getByRole('button', { name: KEY_LABELS.statusActionOf('active', 'Collections partner') })
      .click();
    expect((await toggled).status()).toBe(200);
    await row.getByText('inactive', { exact: true }).waitFor();
    await expect(deviceDetails(key)).resolves.toEqual({
      status: 401,
      body: expect.objectContaining({ message: MESSAGES.authorizationFailed }),
    });

    await row
      .getByRole('button', { name: KEY_LABELS.statusActionOf('inactive', 'Collections partner') })
      .click();
    await row.getByText('active', { exact: true }).waitFor();
    await expect(deviceDetails(key)).resolves.toMatchObject({ status: 200 });
  });

  it('a SUPERADMIN has the screen under /superadmin/keyManagement and sees every key', async () => {
    const { page } = consolePage;
    const keys = await openKeys(page, USERS.superadmin);
    expect(keys.map((k) => k.owner_email)).toContain(USERS.admin.email);
    await rowWith(page, 'Billing integration').waitFor();
  });

  it('an ADMIN does not list SUPERADMIN keys, and cannot switch on a key a SUPERADMIN switched off', async () => {
    // The SUPERADMIN has a key of their own, and switches off one of the ADMIN's.
    const rootToken = await apiToken(server.baseUrl, USERS.superadmin);
    const rootKey = await apiCall<{ id: number }>(server.baseUrl, rootToken, '/keyapi/generate_key.php', {
      key_name: 'Root only',
      password: PASSWORD,
    });
    const adminToken = await apiToken(server.baseUrl, USERS.admin);
    const adminKey = await apiCall<{ id: number }>(server.baseUrl, adminToken, '/keyapi/generate_key.php', {
      key_name: 'Switched off above',
      password: PASSWORD,
    });
    await apiCall(server.baseUrl, rootToken, '/keyapi/keymanagement/update_key_status.php', {
      keyId: adminKey.id,
      status: 'inactive',
    });

    const { page } = consolePage;
    const dialogs = watchDialogs(page);
    const listed = await openKeys(page);
    expect(listed.map((k) => k.id)).toContain(adminKey.id);
    expect(listed.map((k) => k.id)).not.toContain(rootKey.id);
    expect(listed.map((k) => k.owner_email)).not.toContain(USERS.superadmin.email);
    expect(await rowWith(page, 'Root only').count()).toBe(0);

    // The row says why the key is off and who may switch it on again…
    const row = rowWith(page, 'Switched off above');
    await expect(row.getByTestId('inactive-reason').textContent()).resolves.toBe(
      `Deactivated by ${USERS.superadmin.email}. ${KEY_MESSAGES.reactivationNeeds('SUPERADMIN')}`,
    );
    // …and Activate is refused by the server, alerted, and changes nothing.
    const refused = page.waitForResponse(isKeyCall('keymanagement/update_key_status'));
    await row
      .getByRole('button', { name: KEY_LABELS.statusActionOf('inactive', 'Switched off above') })
      .click();
    expect((await refused).status()).toBe(403);
    await expect(dialogs.next()).resolves.toEqual({
      type: 'alert',
      message: KEY_MESSAGES.reactivationNeeds('SUPERADMIN'),
    });
    await page.reload();
    await rowWith(page, 'Switched off above').getByText('inactive', { exact: true }).waitFor();
  });

  it('a USER without the keyManagement permission is told the server refused', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.viewer);
    const listed = page.waitForResponse(isKeyCall('keymanagement/view_keys'));
    await page.goto('/keyManagement');
    expect((await listed).status()).toBe(403);
    await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
  });
});
