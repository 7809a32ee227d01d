import { MESSAGES } from '@lendlock/contract';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { formatLocalDateTime } from '../apps/web/src/lib/datetime';
import { launchBrowser, openConsole, serverCodec, signIn } from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

let server: RunningServer;
let browser: Browser;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: inject('templateDataDir'), sessionTtl: '6s' }),
    launchBrowser(),
  ]);
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

it('with a 6 s session the browser goes to /login once the session expires, its storage cleared, saying so', async () => {
  const { codec } = await serverCodec(server.baseUrl);
  const consolePage = await openConsole(browser, server.baseUrl);
  const { page } = consolePage;
  try {
    const session = await signIn(page, codec, USERS.locker);
    const expiry = Date.parse(session.expiry);
    expect(expiry - Date.now()).toBeLessThanOrEqual(6000);
    await expect(page.getByTestId('expiry-notice').textContent()).resolves.toBe(
      MESSAGES.noticeExpires(formatLocalDateTime(session.expiry)),
    );

    await page.waitForURL((url) => url.pathname === '/login', { timeout: 15_000 });
    // Not before the expiry (1 s of tolerance for the check's tick). How soon after it is the check's
    // 1 s tick (app/session/expiry.test.ts); the wait above gives up after 15 s.
    expect(Date.now()).toBeGreaterThanOrEqual(expiry - 1000);
    const stored = await page.evaluate(() => [
      localStorage.getItem('userSession'),
      localStorage.getItem('expiry'),
    ]);
    expect(stored).toEqual([null, null]);
    // …and /login says why.
    await expect(page.getByTestId('session-ended').textContent()).resolves.toBe(MESSAGES.sessionExpired);
    expect(await consolePage.cspViolations()).toEqual([]);
  } finally {
    await consolePage.close();
  }
});

it('a session that expired while the console was closed: opening it again lands on /login saying it expired', async () => {
  const { codec } = await serverCodec(server.baseUrl);
  const consolePage = await openConsole(browser, server.baseUrl);
  const { page } = consolePage;
  try {
    const session = await signIn(page, codec, USERS.locker);
    await page.goto('about:blank');
    const wait = Date.parse(session.expiry) - Date.now() + 500;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, wait)));
    await page.goto('/reports');
    await page.waitForURL((url) => url.pathname === '/login');
    await expect(page.getByTestId('session-ended').textContent()).resolves.toBe(MESSAGES.sessionExpired);
  } finally {
    await consolePage.close();
  }
});
