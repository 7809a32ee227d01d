/**
 * Key Management in the browser against the real server: Generate Key (the key shown once, with a copy
 * button), the keys table, a call authenticated by the key with its creator's rights, and
 * deactivation refusing the key at its next request.
 */
import {
  type ApiKey,
  generateKeyRequestSchema,
  generateKeyResponseSchema,
  MESSAGES,
  SUPERADMIN_PREFIX,
  viewKeysResponseSchema,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser, Page, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { KEY_LABELS } from '../apps/web/src/pages/Keys/labels';
import {
  type ConsolePage,
  launchBrowser,
  openConsole,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { labelled, rowWith } from './support/ui';
import { type TestUser, USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let consolePage: ConsolePage;

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

beforeEach(async () => {
  consolePage = await openConsole(browser, server.baseUrl);
});

afterEach(async () => {
  expect(await consolePage.cspViolations()).toEqual([]);
  expect(consolePage.pageErrors).toEqual([]);
  await consolePage.close();
});

const isKeyCall = (script: string) => (r: Response) => new URL(r.url()).pathname === `/keyapi/${script}.php`;
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
    expect(sent).toEqual([]);
  });

  it('an ADMIN generates a key that is shown once with a copy button, listed without its secret', async () => {
    const { page, context } = consolePage;
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.baseUrl });
    const before = await openKeys(page);
    expect(before).toEqual([]);

    await labelled(page, KEY_LABELS.keyName).fill('Billing integration');
    const generated = page.waitForResponse(isKeyCall('generate_key'));
    const relisted = page.waitForResponse(isKeyCall('keymanagement/view_keys'));
    await page.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    const reply = generateKeyResponseSchema.parse(await bodyOf(await generated));
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
    await labelled(page, KEY_LABELS.keyName).fill('Collections partner');
    const generated = page.waitForResponse(isKeyCall('generate_key'));
    await page.getByRole('button', { name: KEY_LABELS.generateKey }).click();
    const { key } = generateKeyResponseSchema.parse(await bodyOf(await generated));

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

  it('a USER without the keyManagement permission is told the server refused', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.viewer);
    const listed = page.waitForResponse(isKeyCall('keymanagement/view_keys'));
    await page.goto('/keyManagement');
    expect((await listed).status()).toBe(403);
    await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
  });
});
