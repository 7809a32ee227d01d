/**
 * User Management in the browser against the real server: the All User Details table, Add User and Edit User
 * with every message of their forms and failures, enable/disable and forced logout with their real effects on
 * the other user's browser.
 */
import {
  type ApiKey,
  type ConsoleUser,
  getPermissionsResponseSchema,
  getUsersResponseSchema,
  MESSAGES,
  type Permission,
  SUPERADMIN_PREFIX,
  sidebarFor,
  statusMessageSchema,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Browser, Page, Request, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { USER_LABELS } from '../apps/web/src/pages/Users/labels';
import { permissionLabel } from '../apps/web/src/pages/Users/userForms';
import {
  type ConsolePage,
  launchBrowser,
  nextAlert,
  openConsole,
  screenTitle,
  serverCodec,
  sidebarHrefs,
  signIn,
  submitLogin,
} from './support/browser';
import { apiCall, apiToken } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { type Dialogs, labelled, rowWith, watchDialogs } from './support/ui';
import { PASSWORD, type TestUser, USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let consolePage: ConsolePage;
let dialogs: Dialogs;
/** Other users' browsers opened by a test, checked and closed after it. */
let others: ConsolePage[];

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
  dialogs = watchDialogs(consolePage.page);
  others = [];
});

afterEach(async () => {
  const opened = [consolePage, ...others];
  try {
    for (const one of opened) {
      expect(await one.cspViolations()).toEqual([]);
      expect(one.pageErrors).toEqual([]);
    }
  } finally {
    await Promise.all(opened.map((one) => one.close()));
  }
});

const isCall = (script: string) => (r: Request | Response) =>
  new URL(r.url()).pathname === `/api/${script}.php`;

/** The decrypted body of a response to an enveloped call. */
const bodyOf = async (response: Response): Promise<unknown> => codec.open(await response.json());
/** The decrypted body of an enveloped request. */
const sentBy = (request: Request): unknown => codec.open(request.postDataJSON());

/** Signs in as `user` and opens User Management; resolves with the users the server listed. */
async function openUsers(page: Page, user: TestUser = USERS.admin): Promise<ConsoleUser[]> {
  await signIn(page, codec, user);
  const listed = page.waitForResponse(isCall('getUsers'));
  await page.goto(user.level === 'SUPERADMIN' ? `${SUPERADMIN_PREFIX}/userManagement` : '/userManagement');
  await page.getByRole('heading', { name: screenTitle('userManagement') }).waitFor();
  const items = getUsersResponseSchema.parse(await bodyOf(await listed)).items;
  await page.getByRole('table').waitFor();
  return items;
}

/** Another user's browser, signed in. */
async function otherBrowser(user: TestUser): Promise<ConsolePage> {
  const other = await openConsole(browser, server.baseUrl);
  others.push(other);
  await signIn(other.page, codec, user);
  return other;
}

/** The names in a row's permission hover list. */
async function hoverPermissions(page: Page, email: string): Promise<string[]> {
  await rowWith(page, email)
    .getByText(/^\d+ permissions?$/)
    .hover();
  const list = page.getByRole('list', { name: USER_LABELS.permissionsOf(email) });
  await list.waitFor();
  const names = await list.getByRole('listitem').allTextContents();
  await page.mouse.move(0, 0);
  await list.waitFor({ state: 'hidden' });
  return names.sort();
}

async function openAddUser(page: Page) {
  await page.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
  const modal = page.getByRole('dialog', { name: USER_LABELS.addUser });
  await modal.waitFor();
  await modal.getByRole('checkbox').first().waitFor();
  return modal;
}

async function openEditUser(page: Page, email: string) {
  await page.getByRole('button', { name: USER_LABELS.editAction(email), exact: true }).click();
  const modal = page.getByRole('dialog', { name: USER_LABELS.editUser });
  await modal.waitFor();
  await modal.getByRole('checkbox').first().waitFor();
  return modal;
}

/** The message shown in a modal (its role="alert" text). */
const modalMessage = async (modal: ReturnType<Page['getByRole']>) => modal.getByRole('alert').textContent();

describe('All User Details', () => {
  it('an ADMIN sees every user the server lists, with phone, level, statuses and a hover list of permissions', async () => {
    const { page } = consolePage;
    const listed = await openUsers(page);
    expect(listed.map((user) => user.email).sort()).toEqual(
      Object.values(USERS)
        .map((u) => u.email)
        .sort(),
    );

    const firstCells = await page.locator('tbody tr td:first-child').allTextContents();
    expect(firstCells).toEqual(listed.map((user) => user.email));
    const locker = rowWith(page, USERS.locker.email);
    await expect(locker.getByRole('cell').allTextContents()).resolves.toEqual([
      USERS.locker.email,
      USERS.locker.phone,
      'USER',
      '2 permissions',
      'LOGOUT',
      'ACTIVE',
      USER_LABELS.edit,
    ]);
    // Permissions by the names of their screens, as the menu shows them.
    expect(await hoverPermissions(page, USERS.locker.email)).toEqual(
      USERS.locker.permissions.map(permissionLabel).sort(),
    );
    expect(await hoverPermissions(page, USERS.locker.email)).toEqual(['Lock Device', 'Reports']);
    // The signed-in ADMIN's own row shows a live session, but no control: an ADMIN manages USERs only.
    const own = rowWith(page, USERS.admin.email);
    await own.getByText('LOGIN', { exact: true }).waitFor();
    expect(await own.getByRole('button').count()).toBe(0);
  });

  it('a SUPERADMIN has the same screen under /superadmin/userManagement', async () => {
    const { page } = consolePage;
    await openUsers(page, USERS.superadmin);
    expect(new URL(page.url()).pathname).toBe(`${SUPERADMIN_PREFIX}/userManagement`);
    await rowWith(page, USERS.viewer.email).waitFor();
  });
});

describe('Add User', () => {
  it('checks email domain, phone and password before anything is sent', async () => {
    const { page } = consolePage;
    await openUsers(page);
    const sent: string[] = [];
    page.on('request', (r) => isCall('addUser')(r) && sent.push(r.url()));
    const modal = await openAddUser(page);
    const submit = modal.getByRole('button', { name: USER_LABELS.addUser, exact: true });

    await labelled(modal, USER_LABELS.email).fill('agent@gmail.com');
    await labelled(modal, USER_LABELS.phone).fill('9000000200');
    await labelled(modal, USER_LABELS.password).fill(PASSWORD);
    await submit.click();
    await expect(modalMessage(modal)).resolves.toBe(MESSAGES.invalidEmailDomain);

    await labelled(modal, USER_LABELS.email).fill('agent@lendlock.in');
    for (const phone of ['900000020', '90000002001', '90000abcde']) {
      await labelled(modal, USER_LABELS.phone).fill(phone);
      await submit.click();
      await expect(modalMessage(modal)).resolves.toBe(MESSAGES.invalidPhone);
    }

    await labelled(modal, USER_LABELS.phone).fill('9000000200');
    await labelled(modal, USER_LABELS.password).fill('');
    await submit.click();
    await expect(modalMessage(modal)).resolves.toBe('Password is required');
    await labelled(modal, USER_LABELS.password).fill('short');
    await submit.click();
    const { config } = await serverCodec(server.baseUrl);
    await expect(modalMessage(modal)).resolves.toBe(
      `Password must be at least ${config.passwordMinLength} characters`,
    );
    expect(sent).toEqual([]);
  });

  it('adds a user with the checked permissions as numbers; the table shows them and the user signs in to just those screens', async () => {
    const { page } = consolePage;
    await openUsers(page);
    const newUser = {
      email: 'new.agent@lendlock.in',
      phone: '9000000201',
      level: 'USER',
      permissions: ['auditReport', 'deviceDetails'],
    } as const satisfies TestUser;
    const permissionsListed = page.waitForResponse(isCall('getPermissions'));
    const modal = await openAddUser(page);
    const permissions: Permission[] = getPermissionsResponseSchema.parse(
      await bodyOf(await permissionsListed),
    ).permissions;
    // One checkbox per server-defined permission a USER can use (not User Management nor Device
    // Action), each named by its screen.
    await expect(modal.getByRole('checkbox').count()).resolves.toBe(permissions.length - 2);
    const offered = permissions
      .map((p) => p.permission_name)
      .filter((name) => name !== 'userManagement' && name !== 'deviceAction');
    for (const name of offered)
      await expect(modal.getByLabel(permissionLabel(name), { exact: true }).count()).resolves.toBe(1);
    for (const hidden of ['User Management', 'Device Action', 'userManagement', 'lockDevice'])
      await expect(modal.getByLabel(hidden, { exact: true }).count()).resolves.toBe(0);
    // An ADMIN gives USER accounts only: no level to choose.
    await expect(labelled(modal, USER_LABELS.level).count()).resolves.toBe(0);

    await labelled(modal, USER_LABELS.email).fill(newUser.email);
    await labelled(modal, USER_LABELS.phone).fill(newUser.phone);
    await labelled(modal, USER_LABELS.password).fill(PASSWORD);
    for (const name of newUser.permissions)
      await modal.getByLabel(permissionLabel(name), { exact: true }).check();

    const request = page.waitForRequest(isCall('addUser'));
    const relisted = page.waitForResponse(isCall('getUsers'));
    const alerted = dialogs.next();
    await modal.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
    const idOf = (name: string) => permissions.find((p) => p.permission_name === name)?.id;
    expect(sentBy(await request)).toEqual({
      email: newUser.email,
      phone: newUser.phone,
      password: PASSWORD,
      permissions: newUser.permissions.map(idOf),
    });
    await expect(alerted).resolves.toEqual({ type: 'alert', message: MESSAGES.userAdded });
    await relisted;
    await modal.waitFor({ state: 'hidden' });

    const row = rowWith(page, newUser.email);
    await expect(row.getByRole('cell').nth(1).textContent()).resolves.toBe(newUser.phone);
    expect(await hoverPermissions(page, newUser.email)).toEqual(['Audit Report', 'Device Details']);

    const other = await otherBrowser(newUser);
    const hrefs = await sidebarHrefs(other.page);
    expect(hrefs).toEqual(sidebarFor('USER').map((entry) => entry.path));
    await other.page.goto('/deviceDetails');
    await other.page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
    await other.page.goto('/reports');
    await other.page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
  });

  it("shows the server's refusal, 'Error updating user.' without a message and 'Please try after sometime.' offline", async () => {
    const { page } = consolePage;
    await openUsers(page);
    const modal = await openAddUser(page);
    await labelled(modal, USER_LABELS.email).fill(USERS.locker.email);
    await labelled(modal, USER_LABELS.phone).fill('9000000202');
    await labelled(modal, USER_LABELS.password).fill(PASSWORD);
    const submit = modal.getByRole('button', { name: USER_LABELS.addUser, exact: true });

    const refused = page.waitForResponse(isCall('addUser'));
    await submit.click();
    const response = await refused;
    expect(response.status()).toBe(409);
    const { message } = statusMessageSchema.parse(await bodyOf(response));
    expect(message).toBe('A user with this email already exists');
    await expect(modalMessage(modal)).resolves.toBe(message);

    await page.route('**/api/addUser.php', (route) => route.fulfill({ status: 500, body: '' }));
    await submit.click();
    await modal.getByText(MESSAGES.errorUpdatingUser, { exact: true }).waitFor();

    await page.unroute('**/api/addUser.php');
    await page.route('**/api/addUser.php', (route) => route.abort('internetdisconnected'));
    await submit.click();
    await modal.getByText(MESSAGES.tryAfterSometimeDot, { exact: true }).waitFor();
    expect(dialogs.seen).toEqual([]);
  });
});

describe('Edit User', () => {
  it('keeps the email read-only, checks the phone, saves phone and permissions and says so', async () => {
    const { page } = consolePage;
    const listed = await openUsers(page);
    const locker = listed.find((user) => user.email === USERS.locker.email);
    const modal = await openEditUser(page, USERS.locker.email);
    const email = labelled(modal, USER_LABELS.email);
    await expect(email.inputValue()).resolves.toBe(USERS.locker.email);
    await expect(email.getAttribute('readonly')).resolves.not.toBeNull();
    await expect(modal.getByLabel('Lock Device', { exact: true }).isChecked()).resolves.toBe(true);
    await expect(modal.getByLabel('Reports', { exact: true }).isChecked()).resolves.toBe(true);
    await expect(labelled(modal, USER_LABELS.level).count()).resolves.toBe(0);

    const save = modal.getByRole('button', { name: USER_LABELS.save, exact: true });
    await labelled(modal, USER_LABELS.phone).fill('12345');
    await save.click();
    await expect(modalMessage(modal)).resolves.toBe(MESSAGES.invalidPhone);

    await labelled(modal, USER_LABELS.phone).fill('9000000112');
    await modal.getByLabel('Reports', { exact: true }).uncheck();
    await modal.getByLabel('Audit Report', { exact: true }).check();
    const request = page.waitForRequest(isCall('updateUser'));
    const alerted = dialogs.next();
    await save.click();
    expect(sentBy(await request)).toMatchObject({
      id: locker?.id,
      email: USERS.locker.email,
      phone: '9000000112',
    });
    await expect(alerted).resolves.toEqual({ type: 'alert', message: MESSAGES.userUpdated });
    await modal.waitFor({ state: 'hidden' });
    const row = rowWith(page, USERS.locker.email);
    await row.getByRole('cell', { name: '9000000112', exact: true }).waitFor();
    expect(await hoverPermissions(page, USERS.locker.email)).toEqual(['Audit Report', 'Lock Device']);
  });

  it("shows the server's refusal, 'Error saving user. Please try again.' without a message, and 'Please fill all required fields.' without an email", async () => {
    const { page } = consolePage;
    await openUsers(page);
    // Another user's phone (the ADMIN's, which no test changes): the server refuses and the modal says why.
    let modal = await openEditUser(page, USERS.viewer.email);
    await labelled(modal, USER_LABELS.phone).fill(USERS.admin.phone);
    const save = () => modal.getByRole('button', { name: USER_LABELS.save, exact: true }).click();
    const refused = page.waitForResponse(isCall('updateUser'));
    await save();
    const response = await refused;
    expect(response.status()).toBe(409);
    const { message } = statusMessageSchema.parse(await bodyOf(response));
    expect(message).toBe('A user with this phone number already exists');
    await expect(modalMessage(modal)).resolves.toBe(message);

    await page.route('**/api/updateUser.php', (route) => route.fulfill({ status: 500, body: '' }));
    await save();
    await modal.getByText(MESSAGES.errorSavingUser, { exact: true }).waitFor();
    await modal.getByRole('button', { name: USER_LABELS.cancel }).click();

    // A listed user without an email (the server never sends one; the modal still guards it).
    const broken: ConsoleUser = {
      id: 999,
      email: '',
      phone: '9000000999',
      userlevel: 'USER',
      permissions: [],
      permissions_id: [],
      permission_names: [],
      userstatus: 'ACTIVE',
      loginstatus: 'LOGOUT',
      retailer_phone: null,
      created_at: new Date().toISOString(),
    };
    await page.route('**/api/getUsers.php', (route) =>
      route.fulfill({
        status: 200,
        contentType: 'application/json',
        json: { status: 'success', items: [broken] },
      }),
    );
    await page.reload();
    modal = await openEditUser(page, '');
    await save();
    await expect(modalMessage(modal)).resolves.toBe(MESSAGES.fillRequired);
    expect(dialogs.seen).toEqual([]);
  });
});

describe('user status', () => {
  it('disabling asks first, ends the user’s session and refuses their sign-in; enabling lets them back in', async () => {
    const { page } = consolePage;
    const other = await otherBrowser(USERS.viewer);
    await openUsers(page);
    const row = rowWith(page, USERS.viewer.email);
    await row.getByRole('button', { name: USER_LABELS.forceLogoutAction(USERS.viewer.email) }).waitFor();
    const disable = row.getByRole('button', {
      name: USER_LABELS.statusAction(USERS.viewer.email, 'INACTIVE'),
    });

    // Dismissing the confirmation sends nothing and changes nothing.
    const sent: string[] = [];
    page.on('request', (r) => isCall('updateUserStatus')(r) && sent.push(r.url()));
    dialogs.confirm = 'dismiss';
    await disable.click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.statusConfirm(USERS.viewer.email, 'INACTIVE'),
    });
    await row.getByText('ACTIVE', { exact: true }).waitFor();
    expect(sent).toEqual([]);

    dialogs.confirm = 'accept';
    const changed = page.waitForResponse(isCall('updateUserStatus'));
    await disable.click();
    await expect(dialogs.next()).resolves.toMatchObject({ type: 'confirm' });
    expect(sentBy((await changed).request())).toEqual({ email: USERS.viewer.email, status: 'INACTIVE' });
    await row.getByText('INACTIVE', { exact: true }).waitFor();
    await row.getByText('LOGOUT', { exact: true }).waitFor();

    // The viewer's open browser is signed out on its next call, and told why…
    await other.page.goto('/keyManagement');
    await other.page.waitForURL((url) => url.pathname === '/login');
    await expect(other.page.getByTestId('session-ended').textContent()).resolves.toBe(
      MESSAGES.sessionEndedByAdmin,
    );
    // …and cannot sign in again: the server's message is alerted.
    const [message, attempt] = await Promise.all([
      nextAlert(other.page),
      submitLogin(other.page, codec, USERS.viewer.email, PASSWORD),
    ]);
    expect(attempt.status).toBe(403);
    expect(message).toBe(MESSAGES.loginInactive);

    const enable = row.getByRole('button', { name: USER_LABELS.statusAction(USERS.viewer.email, 'ACTIVE') });
    await enable.click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.statusConfirm(USERS.viewer.email, 'ACTIVE'),
    });
    await row.getByText('ACTIVE', { exact: true }).waitFor();
    await signIn(other.page, codec, USERS.viewer);
  });

  it('toggle errors are alerted raw and leave the row as it was', async () => {
    const { page } = consolePage;
    await openUsers(page, USERS.superadmin);
    const row = rowWith(page, USERS.superadmin.email);
    await row
      .getByRole('button', { name: USER_LABELS.statusAction(USERS.superadmin.email, 'INACTIVE') })
      .click();
    await expect(dialogs.next()).resolves.toMatchObject({ type: 'confirm' });
    await expect(dialogs.next()).resolves.toEqual({
      type: 'alert',
      message: 'The last active SUPERADMIN cannot be disabled or logged out.',
    });
    await row.getByText('ACTIVE', { exact: true }).waitFor();
  });

  it('the last active SUPERADMIN cannot force themselves out: the refusal is alerted raw', async () => {
    const { page } = consolePage;
    await openUsers(page, USERS.superadmin);
    const row = rowWith(page, USERS.superadmin.email);
    await row.getByRole('button', { name: USER_LABELS.forceLogoutAction(USERS.superadmin.email) }).click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutConfirm(USERS.superadmin.email),
    });
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutKeysConfirm,
    });
    await expect(dialogs.next()).resolves.toEqual({
      type: 'alert',
      message: 'The last active SUPERADMIN cannot be disabled or logged out.',
    });
    await row.getByRole('button', { name: USER_LABELS.forceLogoutAction(USERS.superadmin.email) }).waitFor();
  });
});

describe('forced logout', () => {
  it('clicking LOGIN asks first, shows LOGOUT, and the user’s open browser lands on /login at its next call', async () => {
    const { page } = consolePage;
    const other = await otherBrowser(USERS.locker);
    await openUsers(page);
    const row = rowWith(page, USERS.locker.email);
    const loggedIn = row.getByRole('button', { name: USER_LABELS.forceLogoutAction(USERS.locker.email) });

    const ended = page.waitForResponse(isCall('updateLoginStatus'));
    // The spec's confirmation, then the offer to switch the keys off too, declined: the spec's call.
    dialogs.plan.push('accept', 'dismiss');
    await loggedIn.click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutConfirm(USERS.locker.email),
    });
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutKeysConfirm,
    });
    const response = await ended;
    expect(response.status()).toBe(200);
    expect(sentBy(response.request())).toEqual({ email: USERS.locker.email });
    await row.getByText('LOGOUT', { exact: true }).waitFor();
    expect(await loggedIn.count()).toBe(0);

    // Still LOGOUT after the list is fetched again from the server (derived from live sessions).
    await page.reload();
    await rowWith(page, USERS.locker.email).getByText('LOGOUT', { exact: true }).waitFor();

    await other.page.goto('/keyManagement');
    await other.page.waitForURL((url) => url.pathname === '/login');
    await expect(other.page.getByTestId('session-ended').textContent()).resolves.toBe(
      MESSAGES.sessionEndedByAdmin,
    );
    const stored = await other.page.evaluate(() => localStorage.getItem('userSession'));
    expect(stored).toBeNull();
    expect(dialogs.seen.filter((d) => d.type === 'alert')).toEqual([]);
  });

  it('dismissing the first question sends nothing; accepting both also switches the user’s API keys off', async () => {
    // The ADMIN holds a key and a live session; the SUPERADMIN forces the ADMIN out.
    const adminToken = await apiToken(server.baseUrl, USERS.admin);
    const { id, key } = await apiCall<{ id: number; key: string }>(
      server.baseUrl,
      adminToken,
      '/keyapi/generate_key.php',
      { key_name: 'Held by the ADMIN', password: PASSWORD },
    );
    const keyWorks = async () =>
      (await fetch(`${server.baseUrl}/api/homeData.php`, { headers: { 'x-api-key': key } })).status;
    expect(await keyWorks()).toBe(200);

    const { page } = consolePage;
    await openUsers(page, USERS.superadmin);
    const row = rowWith(page, USERS.admin.email);
    const loggedIn = row.getByRole('button', { name: USER_LABELS.forceLogoutAction(USERS.admin.email) });
    const sent: unknown[] = [];
    page.on('request', (r) => isCall('updateLoginStatus')(r) && sent.push(sentBy(r)));

    // No to the spec's question: the second is never asked and nothing is sent.
    dialogs.plan.push('dismiss');
    await loggedIn.click();
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutConfirm(USERS.admin.email),
    });
    await row.getByText('LOGIN', { exact: true }).waitFor();
    expect(sent).toEqual([]);
    expect(dialogs.seen).toHaveLength(1);

    // Yes to both: one call with deactivateKeys, the sessions end and the key is refused.
    dialogs.plan.push('accept', 'accept');
    const ended = page.waitForResponse(isCall('updateLoginStatus'));
    await loggedIn.click();
    await expect(dialogs.next()).resolves.toMatchObject({ type: 'confirm' });
    await expect(dialogs.next()).resolves.toEqual({
      type: 'confirm',
      message: USER_LABELS.forceLogoutKeysConfirm,
    });
    const response = await ended;
    expect(response.status()).toBe(200);
    expect(sent).toEqual([{ email: USERS.admin.email, deactivateKeys: true }]);
    await row.getByText('LOGOUT', { exact: true }).waitFor();
    expect(await keyWorks()).toBe(401);

    // Key Management tells the SUPERADMIN why the key is off; the ADMIN cannot switch it back on.
    const rootToken = await apiToken(server.baseUrl, USERS.superadmin);
    const keys = await apiCall<ApiKey[]>(server.baseUrl, rootToken, '/keyapi/keymanagement/view_keys.php');
    expect(keys.find((k) => k.id === id)).toMatchObject({
      status: 'inactive',
      deactivated_by: USERS.superadmin.email,
      deactivated_by_level: 'SUPERADMIN',
      deactivated_reason: 'forced logout',
    });
    const again = await fetch(`${server.baseUrl}/keyapi/keymanagement/update_key_status.php`, {
      method: 'POST',
      headers: {
        'x-api-key': await apiToken(server.baseUrl, USERS.admin),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ keyId: id, status: 'active' }),
    });
    expect(again.status).toBe(403);
    expect(await keyWorks()).toBe(401);
    expect(dialogs.seen.filter((d) => d.type === 'alert')).toEqual([]);
  });
});
