/**
 * Forgot / reset password in the browser against the real server, with a real SMTP server in this process
 * receiving the mail (the token is mailed, never returned): the link opens Reset Your Password, the new
 * password works, the old one and every session from before the reset do not.
 */
import { MESSAGES, validatePassword } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { LABELS } from '../apps/web/src/lib/labels';
import {
  consolePagePerTest,
  launchBrowser,
  nextAlert,
  openConsole,
  serverCodec,
  signIn,
  submitLogin,
} from './support/browser';
import { type RunningServer, startServer } from './support/server';
import { type Mailbox, resetLinkIn, startMailbox } from './support/smtp';
import { labelled } from './support/ui';
import { PASSWORD, USERS } from './support/users';

const NEW_PASSWORD = 'Fresh#Secret42';

let server: RunningServer;
let browser: Browser;
let mailbox: Mailbox;
let codec: NodeEnvelopeCodec;
let minLength: number;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);

beforeAll(async () => {
  mailbox = await startMailbox();
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: (baseUrl) => ({ SMTP_URL: mailbox.url, PUBLIC_URL: baseUrl }),
    }),
    launchBrowser(),
  ]);
  const { config, codec: serverEnvelope } = await serverCodec(server.baseUrl);
  codec = serverEnvelope;
  minLength = config.passwordMinLength;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  await mailbox?.close();
});

/** Fills Forgot Password with `email`, presses the button and returns the text the page then shows. */
async function requestReset(page: Page, email: string): Promise<string | null> {
  await page.goto('/forgotPassword');
  await labelled(page, LABELS.email).fill(email);
  await page.getByRole('button', { name: LABELS.sendResetEmail }).click();
  const shown = page.getByRole('status').or(page.getByRole('alert'));
  await shown.waitFor();
  return shown.textContent();
}

async function submitReset(page: Page, password: string, confirm: string): Promise<void> {
  await labelled(page, LABELS.newPassword).fill(password);
  await labelled(page, LABELS.confirmPassword).fill(confirm);
  await page.getByRole('button', { name: LABELS.resetPassword }).click();
}

const shownText = (page: Page) => page.getByRole('status').or(page.getByRole('alert')).textContent();

describe('Forgot Password', () => {
  it("needs an email address: 'Please enter a valid email address.', nothing sent", async () => {
    const { page } = consolePage;
    const sent: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/api/forgotPassword.php' && sent.push(r.url()));
    await expect(requestReset(page, '')).resolves.toBe(MESSAGES.forgotEmailRequired);
    await expect(requestReset(page, 'not-an-email')).resolves.toBe(MESSAGES.forgotEmailRequired);
    expect(sent).toEqual([]);
  });

  it('answers the same for an unknown address and mails nobody', async () => {
    const { page } = consolePage;
    const before = mailbox.mails.length;
    await expect(requestReset(page, 'nobody@lendlock.com')).resolves.toBe(MESSAGES.resetLinkSent);
    // Barrier: a later request, for a known address, has its mail delivered; a mail queued before it would
    // have gone out first.
    await expect(requestReset(page, USERS.viewer.email)).resolves.toBe(MESSAGES.resetLinkSent);
    await mailbox.waitForMail(USERS.viewer.email, { since: before });
    expect(mailbox.mails.slice(before).map((m) => m.to)).toEqual([[USERS.viewer.email.toLowerCase()]]);
  });

  it("a refusal shows 'Error: ' + its message; a failed call 'An error occurred. Please try again.' + the error", async () => {
    const { page } = consolePage;
    await page.route('**/api/forgotPassword.php', (route) =>
      route.fulfill({ status: 503, json: { status: 'error', code: 'UNAVAILABLE', message: 'Mail is down' } }),
    );
    await expect(requestReset(page, USERS.viewer.email)).resolves.toBe(MESSAGES.errorPrefix('Mail is down'));

    await page.unroute('**/api/forgotPassword.php');
    await page.route('**/api/forgotPassword.php', (route) => route.abort('internetdisconnected'));
    await expect(requestReset(page, USERS.viewer.email)).resolves.toBe(
      `${MESSAGES.passwordFlowError} Network request failed`,
    );
  });
});

describe('Reset Your Password', () => {
  it('the mailed link sets a new password, goes to /login after 3 s, and ends every earlier session', async () => {
    const { page } = consolePage;
    const user = USERS.locker;
    // A browser signed in before the reset.
    const old = await openConsole(browser, server.baseUrl);
    try {
      await signIn(old.page, codec, user);

      const since = mailbox.mails.length;
      await expect(requestReset(page, user.email)).resolves.toBe(MESSAGES.resetLinkSent);
      const mail = await mailbox.waitForMail(user.email, { since });
      const link = resetLinkIn(mail.raw, server.baseUrl);

      await page.goto(link);
      await page.getByRole('heading', { name: LABELS.resetPasswordTitle }).waitFor();
      await submitReset(page, NEW_PASSWORD, `${NEW_PASSWORD}x`);
      await expect(shownText(page)).resolves.toBe(MESSAGES.passwordsDoNotMatch);
      await submitReset(page, 'short', 'short');
      await expect(shownText(page)).resolves.toBe(validatePassword('short', minLength));

      const reset = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/reset_password.php');
      await submitReset(page, NEW_PASSWORD, NEW_PASSWORD);
      expect((await reset).status()).toBe(200);
      await page.getByText(MESSAGES.passwordResetSuccess, { exact: true }).waitFor();
      // The message stays on screen before the console goes to /login (a timer: it cannot come early;
      // how late it comes on a busy machine is no part of the behaviour, so no upper bound is asserted).
      const shownAt = Date.now();
      await page.waitForURL((url) => url.pathname === '/login', { timeout: 10_000 });
      expect(Date.now() - shownAt).toBeGreaterThanOrEqual(2500);

      // The old password is refused, the new one signs in.
      const [refusal, attempt] = await Promise.all([
        nextAlert(page),
        submitLogin(page, codec, user.email, PASSWORD),
      ]);
      expect(attempt.status).toBe(401);
      expect(refusal).toBe(MESSAGES.loginInvalid);
      const signedIn = await submitLogin(page, codec, user.email, NEW_PASSWORD);
      expect(signedIn.status).toBe(200);
      await page.waitForURL((url) => url.pathname === '/');

      // The session from before the reset is gone: its next call lands on /login.
      await old.page.goto('/keyManagement');
      await old.page.waitForURL((url) => url.pathname === '/login');
      expect(old.pageErrors).toEqual([]);

      // The link works once.
      await page.goto(link);
      await submitReset(page, 'Another#Secret9', 'Another#Secret9');
      await expect(shownText(page)).resolves.toBe(MESSAGES.resetTokenInvalid);
    } finally {
      await old.close();
    }
  });

  it('a made-up token gets the server’s refusal; a blank one asks for a new link', async () => {
    const { page } = consolePage;
    await page.goto('/resetPassword/not-a-real-token-0123456789');
    await submitReset(page, NEW_PASSWORD, NEW_PASSWORD);
    await expect(shownText(page)).resolves.toBe(MESSAGES.resetTokenInvalid);

    const sent: string[] = [];
    page.on('request', (r) => new URL(r.url()).pathname === '/api/reset_password.php' && sent.push(r.url()));
    await page.goto('/resetPassword/%20');
    await submitReset(page, NEW_PASSWORD, NEW_PASSWORD);
    await expect(shownText(page)).resolves.toBe(MESSAGES.resetTokenMissing);
    expect(sent).toEqual([]);
  });
});
