import { isEnvelope, MESSAGES, SUPERADMIN_PREFIX, sidebarFor } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { formatLocalDateTime } from '../apps/web/src/lib/datetime';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  nextAlert,
  screenTitle,
  serverCodec,
  sidebarHrefs,
  signIn,
  submitLogin,
} from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { PASSWORD, USERS } from './support/users';

/** The spec's sidebar, typed here by hand: the entries it places, in its order. */
const SPEC_SIDEBAR = [
  '/',
  '/enableNotification',
  '/setWallpaper',
  '/removeWallpaper',
  '/activateAlarm',
  '/deactivateAlarm',
  '/gradeDisableApp',
  '/disableApp',
  '/restoreApp',
  '/disableCamera',
  '/enableCamera',
  '/releaseDevice',
  '/deviceDetails',
  '/formattedDevice',
  '/enableCredit',
  '/userManagement',
  '/reports',
  '/appversion',
  '/auditReport',
  '/logout',
];
/** Entries the sidebar has whose place the spec does not show (lock/unlock/block/unblock, revoke credit). */
const SPEC_UNPLACED = ['/lockDevice', '/unlockDevice', '/blockApp', '/unblockapp', '/revokeCredit'];
const toSuperadmin = (path: string) => (path === '/' ? SUPERADMIN_PREFIX : `${SUPERADMIN_PREFIX}${path}`);

const EXPECTED_SIDEBARS = {
  // Batches is not a screen of the spec.
  USER: {
    placed: SPEC_SIDEBAR.filter((p) => p !== '/userManagement'),
    unplaced: [...SPEC_UNPLACED, '/batches'],
  },
  // Webhooks, Loans and Collections are not screens of the spec; Key Management is, but the spec's
  // sidebar omits it.
  ADMIN: {
    placed: SPEC_SIDEBAR,
    unplaced: [...SPEC_UNPLACED, '/webhooks', '/keyManagement', '/batches', '/loans', '/collections'],
  },
  // The same entries under /superadmin/ without Enable Credit, plus Device Action and Last Command, and
  // the audit log search and the webhooks (not screens of the spec).
  SUPERADMIN: {
    placed: SPEC_SIDEBAR.filter((p) => p !== '/enableCredit').map(toSuperadmin),
    unplaced: [
      ...SPEC_UNPLACED,
      '/deviceAction',
      '/lastCommand',
      '/auditLog',
      '/webhooks',
      '/keyManagement',
      '/batches',
      '/loans',
      '/collections',
    ].map(toSuperadmin),
  },
};

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
// Every page must load under the server's strict CSP without a blocked style or script (checked after each test).
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: inject('templateDataDir'), sessionTtl: '8h' }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const path = () => new URL(consolePage.page.url()).pathname;

describe('sign-in', () => {
  it('the login screen has the spec fields, styled by Mantine under the CSP', async () => {
    const { page } = consolePage;
    await page.goto('/login');
    await fieldLabelled(page, 'Enter Email or Phone').waitFor();
    await expect(fieldLabelled(page, 'Password').getAttribute('type')).resolves.toBe('password');
    await expect(page.getByRole('link', { name: /forgot password/i }).getAttribute('href')).resolves.toBe(
      '/forgotPassword',
    );
    const button = page.getByRole('button', { name: 'Login', exact: true });
    const background = await button.evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(background).not.toBe('rgba(0, 0, 0, 0)');
    // Mantine's runtime <style> tags carry the nonce, so the browser applied them.
    const styleTags = await page.locator('style[data-mantine-styles]').count();
    expect(styleTags).toBeGreaterThan(0);
  });

  it('a wrong password alerts the server message and stays on /login', async () => {
    const { page } = consolePage;
    const [message, attempt] = await Promise.all([
      nextAlert(page),
      submitLogin(page, codec, USERS.viewer.email, 'Wrong#Password1'),
    ]);
    expect(attempt.status).toBe(401);
    expect(message).toBe((attempt.body as { message: string }).message);
    expect(message).toBe(MESSAGES.loginInvalid);
    expect(path()).toBe('/login');
  });

  it('/superadmin/login refuses an ADMIN with the server message', async () => {
    const { page } = consolePage;
    const dialog = page.waitForEvent('dialog');
    const attemptPromise = submitLogin(
      page,
      codec,
      USERS.admin.email,
      PASSWORD,
      `${SUPERADMIN_PREFIX}/login`,
    );
    const shown = await dialog;
    const message = shown.message();
    await shown.accept();
    const attempt = await attemptPromise;
    expect(attempt.status).toBe(403);
    expect(message).toBe((attempt.body as { message: string }).message);
    expect(message).toBe(MESSAGES.loginSuperadminOnly);
    expect(path()).toBe(`${SUPERADMIN_PREFIX}/login`);
  });

  it('stores the session sealed under userSession with its expiry apart, and keeps it over a reload', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, USERS.admin);
    const stored = await page.evaluate(() => ({
      userSession: localStorage.getItem('userSession'),
      expiry: localStorage.getItem('expiry'),
    }));
    const envelope = JSON.parse(stored.userSession ?? 'null');
    expect(isEnvelope(envelope)).toBe(true);
    expect(stored.userSession).not.toContain(session.token);
    expect(codec.open(envelope)).toEqual(session);
    expect(stored.expiry).toBe(session.expiry);

    await page.goto('/reports');
    await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
    expect(path()).toBe('/reports');
  });

  it('opening /login clears the stored session and ends it on the server', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, USERS.locker);
    const ended = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/logout.php');
    await page.goto('/login');
    await ended;
    const stored = await page.evaluate(() => [
      localStorage.getItem('userSession'),
      localStorage.getItem('expiry'),
    ]);
    expect(stored).toEqual([null, null]);
    const reuse = await fetch(`${server.baseUrl}/api/logout.php`, {
      method: 'POST',
      headers: { 'X-API-Key': session.token },
    });
    expect(reuse.status).toBe(401);
  });
});

describe('layout', () => {
  it.each([
    ['USER', USERS.locker],
    ['ADMIN', USERS.admin],
    ['SUPERADMIN', USERS.superadmin],
  ] as const)('the %s sidebar matches the contract and the spec’s order', async (level, user) => {
    const { page } = consolePage;
    await signIn(page, codec, user);
    const hrefs = await sidebarHrefs(page);
    expect(hrefs).toEqual(sidebarFor(level).map((entry) => entry.path));

    const expected = EXPECTED_SIDEBARS[level];
    expect(hrefs.filter((href) => !expected.unplaced.includes(href))).toEqual(expected.placed);
    expect(hrefs.filter((href) => expected.unplaced.includes(href)).sort()).toEqual(
      [...expected.unplaced].sort(),
    );
  });

  it('shows the product label, the red expiry notice with the session expiry, and a live clock', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, USERS.admin);
    const { config } = await serverCodec(server.baseUrl);

    await expect(page.getByTestId('product-label').textContent()).resolves.toBe(config.productLabel);
    const notice = page.getByTestId('expiry-notice');
    await expect(notice.textContent()).resolves.toBe(
      MESSAGES.noticeExpires(formatLocalDateTime(session.expiry)),
    );
    const color = await notice.evaluate((el) => getComputedStyle(el).color);
    const [r = 0, g = 0, b = 0] = (color.match(/\d+/g) ?? []).map(Number);
    expect(r).toBeGreaterThan(150);
    expect(g).toBeLessThan(120);
    expect(b).toBeLessThan(120);

    const clock = page.getByTestId('clock');
    const first = await clock.textContent();
    expect(first).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    await page.waitForFunction(
      (before) => document.querySelector('[data-testid="clock"]')?.textContent !== before,
      first,
      { timeout: 3000 },
    );
  });
});

describe('route guards', () => {
  it('a USER without the lockDevice permission sees the unauthorised page at /lockDevice', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.viewer);
    await page.goto('/lockDevice');
    await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
    expect(path()).toBe('/lockDevice');
    expect(await page.getByRole('heading', { name: screenTitle('lockDevice') }).count()).toBe(0);
  });

  it('a USER with the lockDevice permission sees the Lock Device screen', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.locker);
    await page.goto('/lockDevice');
    await page.getByRole('heading', { name: screenTitle('lockDevice') }).waitFor();
    expect(await page.getByText(MESSAGES.unauthorised).count()).toBe(0);
  });

  it.each([
    ['an ADMIN', USERS.admin],
    ['a USER', USERS.locker],
  ] as const)(
    '%s going to /superadmin/reports sees the unauthorised page and stays signed in',
    async (_, user) => {
      // Not /login, which would end the session: a guard never signs anyone out.
      const { page } = consolePage;
      await signIn(page, codec, user);
      await page.goto(`${SUPERADMIN_PREFIX}/reports`);
      await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
      expect(path()).toBe(`${SUPERADMIN_PREFIX}/reports`);
      await page.goto('/reports');
      await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
    },
  );

  it('a USER at /userManagement sees the unauthorised page and stays signed in', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.locker);
    await page.goto('/userManagement');
    await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
    expect(path()).toBe('/userManagement');
    expect(await page.evaluate(() => localStorage.getItem('userSession'))).not.toBeNull();
  });

  it('an ADMIN sees User Management; a SUPERADMIN sees Device Action under /superadmin/', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-userManagement').click();
    await page.getByRole('heading', { name: screenTitle('userManagement') }).waitFor();
    expect(path()).toBe('/userManagement');

    await signIn(page, codec, USERS.superadmin);
    await page.getByTestId('nav-deviceAction').click();
    await page.getByRole('heading', { name: screenTitle('deviceAction') }).waitFor();
    expect(path()).toBe(`${SUPERADMIN_PREFIX}/deviceAction`);
  });

  it('a signed-out visitor at / goes to /login', async () => {
    const { page } = consolePage;
    await page.goto('/');
    await page.waitForURL((url) => url.pathname === '/login');
  });
});

describe('logout', () => {
  it.each([
    ['a USER', USERS.locker],
    ['a SUPERADMIN', USERS.superadmin],
  ] as const)('%s logging out lands on /login and the old token no longer works', async (_, user) => {
    const { page } = consolePage;
    const session = await signIn(page, codec, user);
    const loggedOut = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/logout.php');
    await page.getByTestId('nav-logout').click();
    expect((await loggedOut).status()).toBe(200);
    await page.waitForURL((url) => url.pathname === '/login');
    const stored = await page.evaluate(() => [
      localStorage.getItem('userSession'),
      localStorage.getItem('expiry'),
    ]);
    expect(stored).toEqual([null, null]);

    const reuse = await fetch(`${server.baseUrl}/api/logout.php`, {
      method: 'POST',
      headers: { 'X-API-Key': session.token },
    });
    expect(reuse.status).toBe(401);
    expect(await reuse.json()).toMatchObject({ status: 'error', message: MESSAGES.authorizationFailed });
  });
});
