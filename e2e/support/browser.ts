/** Chromium (installed at /usr/bin/chromium) driven by playwright-core, plus the console's sign-in steps. */
import {
  type RuntimeConfig,
  runtimeConfigSchema,
  SCREENS,
  type Session,
  SUPERADMIN_PREFIX,
  sessionSchema,
} from '@lendlock/contract';
import { createNodeEnvelopeCodec, type NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterEach, beforeEach, expect } from 'vitest';
import { LABELS } from '../../apps/web/src/lib/labels';
import { PASSWORD, type TestUser } from './users';

export { launchBrowser } from './chromium';

export interface ConsolePage {
  context: BrowserContext;
  page: Page;
  /** CSP violations seen by the page (securitypolicyviolation events and console reports). */
  cspViolations(): Promise<string[]>;
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  close(): Promise<void>;
}

export async function openConsole(
  browser: Browser,
  baseUrl: string,
  /** The browser's time zone (e.g. `Asia/Kolkata`; the machine's when not given). */
  options: { timezoneId?: string } = {},
): Promise<ConsolePage> {
  const context = await browser.newContext({
    baseURL: baseUrl,
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  context.setDefaultTimeout(15_000);
  await context.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { __cspViolations: string[] }).__cspViolations = seen;
    document.addEventListener('securitypolicyviolation', (event) => {
      seen.push(
        `${event.violatedDirective} blocked ${event.blockedURI || 'inline'} at ${event.sourceFile}:${event.lineNumber}:${event.columnNumber}`,
      );
    });
  });
  const page = await context.newPage();
  const consoleReports: string[] = [];
  const pageErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) {
      consoleReports.push(message.text());
    }
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  return {
    context,
    page,
    pageErrors,
    async cspViolations() {
      const fromPage = await page
        .evaluate(() => (window as unknown as { __cspViolations?: string[] }).__cspViolations ?? [])
        .catch(() => [] as string[]);
      return [...consoleReports, ...fromPage];
    },
    close: () => context.close(),
  };
}

/**
 * A fresh console page for each test of the file: opened before it, and after it checked (no CSP
 * violation, no uncaught error in the page) and closed. Call it at the top level of a test file; what it
 * returns reads as the running test's page (`consolePage.page`).
 */
export function consolePagePerTest(
  browser: () => Browser,
  baseUrl: () => string,
  options: { timezoneId?: string } = {},
): ConsolePage {
  let current: ConsolePage | undefined;
  const open = (): ConsolePage => {
    if (!current) throw new Error('no console page outside a test');
    return current;
  };
  beforeEach(async () => {
    current = await openConsole(browser(), baseUrl(), options);
  });
  afterEach(async () => {
    // Not opened (its beforeEach failed): that failure is the one to report.
    if (!current) return;
    const page = current;
    current = undefined;
    try {
      expect(await page.cspViolations()).toEqual([]);
      expect(page.pageErrors).toEqual([]);
    } finally {
      await page.close();
    }
  });
  return {
    get context() {
      return open().context;
    },
    get page() {
      return open().page;
    },
    get pageErrors() {
      return open().pageErrors;
    },
    cspViolations: () => open().cspViolations(),
    close: () => open().close(),
  };
}

/** The server's runtime config and an envelope codec with its key, to read what the browser received. */
export async function serverCodec(
  baseUrl: string,
): Promise<{ config: RuntimeConfig; codec: NodeEnvelopeCodec }> {
  const config = runtimeConfigSchema.parse(await (await fetch(`${baseUrl}/config.json`)).json());
  return { config, codec: createNodeEnvelopeCodec(config.envelopeKey) };
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The input whose label is `label` (Mantine appends an aria-hidden ' *' to required fields' labels). */
export function fieldLabelled(page: Page, label: string) {
  return page.getByLabel(new RegExp(`^${escapeRegExp(label)}( \\*)?$`));
}

/** Resolves with the message of the next alert, accepting it. */
export async function nextAlert(page: Page): Promise<string> {
  const dialog = await page.waitForEvent('dialog');
  const message = dialog.message();
  await dialog.accept();
  return message;
}

export interface LoginAttempt {
  status: number;
  /** The decrypted body of the login.php response. */
  body: unknown;
}

/** Types the credentials on a login screen, presses Login and returns the server's answer. */
export async function submitLogin(
  page: Page,
  codec: NodeEnvelopeCodec,
  email: string,
  password: string,
  path = '/login',
): Promise<LoginAttempt> {
  await page.goto(path);
  await fieldLabelled(page, LABELS.loginIdentifier).fill(email);
  await fieldLabelled(page, LABELS.password).fill(password);
  const response = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/login.php');
  await page.getByRole('button', { name: LABELS.login, exact: true }).click();
  const answer = await response;
  return { status: answer.status(), body: codec.open(await answer.json()) };
}

/** Signs in through the UI (SUPERADMIN through /superadmin/login) and waits for the layout. */
export async function signIn(page: Page, codec: NodeEnvelopeCodec, user: TestUser): Promise<Session> {
  const superadmin = user.level === 'SUPERADMIN';
  const attempt = await submitLogin(
    page,
    codec,
    user.email,
    PASSWORD,
    superadmin ? `${SUPERADMIN_PREFIX}/login` : '/login',
  );
  const session = sessionSchema.parse(attempt.body);
  await page.waitForURL((url) => url.pathname === (superadmin ? SUPERADMIN_PREFIX : '/'));
  await page.getByTestId('sidebar').waitFor();
  return session;
}

/** The hrefs of the sidebar links, in order. */
export async function sidebarHrefs(page: Page): Promise<string[]> {
  await page.getByTestId('nav-home').waitFor();
  return page
    .getByTestId('sidebar')
    .locator('a[data-testid^="nav-"]')
    .evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
}

export function screenTitle(name: string): string {
  const screen = SCREENS.find((s) => s.name === name);
  if (!screen) throw new Error(`no screen ${name}`);
  return screen.title;
}
