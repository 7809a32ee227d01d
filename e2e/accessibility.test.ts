/**
 * The console is accessible to everyone, in a real browser: every screen of the contract's table that a
 * USER holding every permission, an ADMIN and a SUPERADMIN may open, and the signed-out pages (login,
 * forgot and reset password, an unknown path), are checked with axe-core against WCAG 2.2 AA (no serious
 * or critical violation: contrast, names, target sizes of 24 px, …), have exactly one h1, give inputs a
 * visible focus ring, and, in the layout, start with a skip link that moves the focus to the main
 * content. Device Details is also checked with an online device shown (its Online badge).
 * And uploading a multi-MB batch CSV shows the bytes sent and the percent as it goes.
 */
import {
  getPermissionsResponseSchema,
  SCREENS,
  type Screen,
  type Session,
  SUPERADMIN_PREFIX,
  screenByName,
  screenPath,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { decideAccess } from '../apps/web/src/app/guards';
import { BATCH_LABELS } from '../apps/web/src/features/batch/labels';
import { DEVICE_LABELS } from '../apps/web/src/features/devices/labels';
import { LABELS } from '../apps/web/src/lib/labels';
import { TWO_FACTOR_PATH } from '../apps/web/src/pages/Auth/TwoFactor/paths';
import { USER_LABELS } from '../apps/web/src/pages/Users/labels';
import { axeViolations } from './support/axe';
import { chooseFile, imeiCsv, unknownImeis } from './support/batches';
import { consolePagePerTest, fieldLabelled, launchBrowser, serverCodec, signIn } from './support/browser';
import { apiCall, apiToken, newEnrollmentSecret, randomSeed, startFleet } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { PASSWORD, type TestUser, USERS } from './support/users';

const enrollmentSecret = newEnrollmentSecret();

/** A USER holding every permission (added through addUser.php; the template has none). */
const EVERYTHING: TestUser = {
  email: `a11y-user-${Date.now()}@lendlock.com`,
  phone: `6${String(Date.now()).slice(-9)}`,
  level: 'USER',
  permissions: [],
};

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let fleet: Fleet;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
/** The IMEI of the simulated device, online. */
let onlineImei: string;

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  fleet = await startFleet({ baseUrl: server.baseUrl, enrollmentSecret, devices: 1, seed: randomSeed() });
  onlineImei = fleet.devices[0]?.imei ?? '';
  const token = await apiToken(server.baseUrl, USERS.admin);
  await waitUntil('the device online', async () => {
    const { items } = await apiCall<{ items: { online: boolean }[] }>(
      server.baseUrl,
      token,
      '/api/devicedetails.php',
      { imeis: [onlineImei] },
    );
    return items[0]?.online === true;
  });
  // A command, so the dashboard has commands by status to show.
  await apiCall(server.baseUrl, token, '/api/locknotification.php', { imei: onlineImei, action: 'lock' });
  const { permissions } = getPermissionsResponseSchema.parse(
    await apiCall(server.baseUrl, token, '/api/getPermissions.php'),
  );
  await apiCall(server.baseUrl, token, '/api/addUser.php', {
    email: EVERYTHING.email,
    phone: EVERYTHING.phone,
    password: PASSWORD,
    // Every permission a USER may hold (those of the ADMIN and SUPERADMIN screens it may not).
    permissions: permissions
      .filter((permission) => {
        const guard = screenByName(permission.permission_name)?.guard;
        return guard !== 'admin' && guard !== 'superadminOnly';
      })
      .map((permission) => permission.id),
  });
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
  await server?.stop();
});

/** Waits for the page's content: its h1, then no request or loader for a moment. */
async function settle(page: Page): Promise<void> {
  await page.locator('h1').first().waitFor({ timeout: 20_000 });
  await page.waitForLoadState('networkidle').catch(() => undefined);
  await page
    .waitForFunction(
      () => [...document.querySelectorAll('.mantine-Loader-root')].every((l) => !l.checkVisibility()),
      undefined,
      { timeout: 10_000 },
    )
    .catch(() => undefined);
}

/** What is wrong with the page as it stands, one line per problem (none: []). */
async function problemsOf(page: Page, where: string): Promise<string[]> {
  const problems = await axeViolations(page, where);
  const h1s = await page.locator('h1').allTextContents();
  if (h1s.length !== 1) problems.push(`${where}: ${h1s.length} h1 (${JSON.stringify(h1s)}), not one`);
  for (const input of await inputsWithoutFocusRing(page)) {
    problems.push(`${where}: no visible focus ring on ${input}`);
  }
  return problems;
}

/**
 * Focuses each visible, enabled input, select, textarea and file picker (after a key press, as a
 * keyboard user would) and lists those that do not match :focus-visible with a 2 px outline or a box
 * shadow, on the control or on the Mantine input box around it.
 */
async function inputsWithoutFocusRing(page: Page): Promise<string[]> {
  await page.keyboard.press('Shift');
  return page.evaluate(() => {
    const ringed = (element: Element) => {
      const style = getComputedStyle(element);
      const outline = style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2;
      return outline || style.boxShadow !== 'none';
    };
    const missing: string[] = [];
    const fields = 'input, select, textarea, button.mantine-Input-input'; // the last: FileInput's
    const controls = [...document.querySelectorAll<HTMLElement>(fields)].filter(
      (control) =>
        (control as HTMLInputElement).type !== 'hidden' &&
        !(control as HTMLInputElement).disabled &&
        control.checkVisibility({ visibilityProperty: true, opacityProperty: true }),
    );
    for (const control of controls) {
      control.focus();
      if (document.activeElement !== control) continue;
      const box = control.closest('.mantine-Input-input');
      if (!control.matches(':focus-visible') || !(ringed(control) || (box !== null && ringed(box)))) {
        const name = control.getAttribute('aria-label') ?? control.id;
        missing.push(`${control.tagName.toLowerCase()}[type=${control.getAttribute('type')}] ${name}`);
      }
      control.blur();
    }
    return missing;
  });
}

/** In the layout: the first Tab reaches 'Skip to main content', shown; Enter puts the focus in main. */
async function skipLinkProblems(page: Page, where: string): Promise<string[]> {
  await page.keyboard.press('Tab');
  const first = await page.evaluate(() => {
    const active = document.activeElement as HTMLElement | null;
    const box = active?.getBoundingClientRect();
    return {
      text: active?.textContent ?? '',
      inView: box !== undefined && box.height >= 24 && box.top >= 0 && box.bottom <= window.innerHeight,
    };
  });
  if (first.text !== LABELS.skipToContent || !first.inView) {
    return [`${where}: the first tab stop is ${JSON.stringify(first)}, not a visible skip link`];
  }
  await page.keyboard.press('Enter');
  const focus = await page.evaluate(() => document.activeElement?.tagName ?? '');
  return focus === 'MAIN' ? [] : [`${where}: the skip link moved the focus to ${focus}, not main`];
}

/** Opens `path`, checks it (and its skip link when it has the layout), and returns what is wrong. */
async function visit(page: Page, path: string, layout: boolean): Promise<string[]> {
  await page.goto(path);
  const shown = await settle(page).then(
    () => true,
    () => false,
  );
  const where = new URL(page.url()).pathname;
  if (!shown) return [`${path}: no h1 within 20 s (at ${where})`];
  const skip = layout ? await skipLinkProblems(page, where) : [];
  return [...skip, ...(await problemsOf(page, where))];
}

/** The screens of the contract's table that `session` may open under its prefix (Logout ends it). */
function screensFor(session: Session): Screen[] {
  const superadmin = session.userlevel === 'SUPERADMIN';
  return SCREENS.filter(
    (screen) => screen.name !== 'logout' && decideAccess(session, screen, superadmin) === 'allow',
  );
}

describe('signed out', () => {
  it('the login, super admin login, forgot and reset password pages and an unknown path', async () => {
    const { page } = consolePage;
    const problems: string[] = [];
    for (const path of [
      '/login',
      `${SUPERADMIN_PREFIX}/login`,
      '/forgotPassword',
      '/resetPassword/some-token',
    ]) {
      problems.push(...(await visit(page, path, false)));
    }
    problems.push(...(await visit(page, '/no-such-page', false)));
    expect(new URL(page.url()).pathname).toBe('/login');
    expect(problems).toEqual([]);
  });
});

describe('the checks themselves', () => {
  it("report Mantine's default colours and inputs without a focus ring", async () => {
    const { page } = consolePage;
    await page.goto('/login');
    await settle(page);
    expect(await problemsOf(page, '/login')).toEqual([]);
    // Back to Mantine's blue 6 (white on it 3.56:1) and no outline on focus (set through the CSSOM,
    // which the CSP allows: it blocks inline style tags).
    await page.evaluate(() => {
      document.documentElement.style.setProperty('--mantine-color-blue-6', '#228be6');
      for (const input of document.querySelectorAll<HTMLElement>('.mantine-Input-input')) {
        input.style.setProperty('outline', 'none', 'important');
      }
    });
    const problems = await problemsOf(page, '/login');
    expect(problems.filter((problem) => problem.includes('color-contrast (serious)'))).not.toEqual([]);
    expect(problems.filter((problem) => problem.includes('no visible focus ring'))).toHaveLength(2);
  });
});

describe.each([
  ['a USER with every permission', EVERYTHING],
  ['an ADMIN', USERS.admin],
  ['a SUPERADMIN', USERS.superadmin],
] as const)('signed in as %s', (_who, user) => {
  it('every screen it may open, its two-factor page and an unknown path', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, user);
    const superadmin = session.userlevel === 'SUPERADMIN';
    const screens = screensFor(session);
    // Every screen of the table but Logout, less those of a higher level only: nothing skipped silently.
    const higher = { USER: ['admin', 'superadminOnly'], ADMIN: ['superadminOnly'], SUPERADMIN: [] }[
      session.userlevel
    ] as string[];
    const left = SCREENS.filter((screen) => screen.name !== 'logout' && !screens.includes(screen));
    expect(left.filter((screen) => !higher.includes(screen.guard))).toEqual([]);
    const problems: string[] = [];
    for (const screen of screens) {
      const found = await visit(page, screenPath(screen.name as never, superadmin), true);
      const title = await page.locator('h1').first().textContent();
      if (title !== screen.title) found.push(`${screen.name}: h1 reads ${title}, not ${screen.title}`);
      problems.push(...found);
    }
    problems.push(...(await visit(page, TWO_FACTOR_PATH, false)));
    problems.push(...(await visit(page, '/no-such-page', true)));
    expect(new URL(page.url()).pathname).toBe('/');
    expect(problems).toEqual([]);
  }, 600_000);
});

describe('states beyond a screen at rest', () => {
  it('Device Details with an online device: the Online badge and the state panels', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await settle(page);
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(onlineImei);
    await expect(page.getByTestId('device-online').textContent()).resolves.toBe(DEVICE_LABELS.online);
    await settle(page);
    expect(await problemsOf(page, 'deviceDetails with a device')).toEqual([]);
    // The badge itself: white on green at 4.5:1 at least (Mantine's default green measured 2.36:1).
    const colours = await page
      .getByTestId('device-online')
      .evaluate((badge) => [getComputedStyle(badge).color, getComputedStyle(badge).backgroundColor]);
    expect(colours[0]).toBe('rgb(255, 255, 255)');
    expect(contrast(colours[0] as string, colours[1] as string)).toBeGreaterThanOrEqual(4.5);
  });
});

describe('a dialog', () => {
  it("User Management's Add User dialog, its permission checkboxes included", async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/userManagement');
    await settle(page);
    await page.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
    const dialog = page.getByRole('dialog', { name: USER_LABELS.addUser });
    await dialog.getByRole('checkbox').first().waitFor();
    expect(await problemsOf(page, 'the Add User dialog')).toEqual([]);
  });
});

/** The WCAG contrast ratio of two `rgb(r, g, b)` colours. */
function contrast(a: string, b: string): number {
  const lum = (rgb: string) => {
    const [r, g, bl] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map((c) => {
      const v = Number(c) / 255;
      return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
    }) as [number, number, number];
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [light, dark] = [lum(a), lum(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

describe('batch upload progress', () => {
  it('a multi-MB CSV shows the bytes sent and the percent while it uploads', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/lockDevice');
    await settle(page);
    // Every value the progress bar and its text take, seen as they change (the upload is quick on loopback).
    await page.evaluate(() => {
      const seen: { value: string | null; text: string }[] = [];
      (window as unknown as { __uploadSeen: typeof seen }).__uploadSeen = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="upload-progress"]')?.textContent;
        const bar = document.querySelector('[role="progressbar"][aria-label="Upload progress"]');
        const last = seen.at(-1);
        if (text && (last?.text !== text || last?.value !== bar?.getAttribute('aria-valuenow'))) {
          seen.push({ value: bar?.getAttribute('aria-valuenow') ?? null, text });
        }
      }).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
    });
    // Upload at 4 MB/s, as over a real link, so the upload takes a while.
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 4 * 1024 * 1024,
    });
    const csv = imeiCsv(unknownImeis(240_000));
    expect(csv.length).toBeGreaterThan(5 * 1024 * 1024);
    const panel = page.getByTestId('batch-panel');
    await chooseFile(panel, 'large.csv', csv);

    const bar = page.getByRole('progressbar', { name: BATCH_LABELS.uploadProgress });
    await bar.waitFor({ timeout: 30_000 });
    // The upload is over once the batch's own progress shows; then it is paused, not left running.
    await page.getByTestId('batch-progress').waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: BATCH_LABELS.pause }).click();
    await cdp.send('Network.emulateNetworkConditions', {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });

    const seen = await page.evaluate(
      () => (window as unknown as { __uploadSeen: { value: string | null; text: string }[] }).__uploadSeen,
    );
    const total = `${(csv.length / 1024 / 1024).toFixed(1)} MB`;
    expect(seen[0]).toEqual({ value: '0', text: `0 B of ${total} sent (0%)` });
    for (const { value, text } of seen) {
      expect(text).toMatch(new RegExp(`^\\d+(\\.\\d)? (B|KB|MB) of \\d+\\.\\d MB sent \\(${value}%\\)$`));
    }
    const percents = seen.map((step) => Number(step.value));
    expect(percents).toEqual([...percents].sort((x, y) => x - y));
    expect(percents.some((percent) => percent > 0 && percent < 100)).toBe(true);
    expect(percents.at(-1)).toBe(100);
  }, 180_000);
});
