/**
 * No silent exits, and User Management that makes sense, in the browser against the real server: a session
 * ended by an administrator while its user sends a command lands on /login saying so and reporting the
 * command not sent (and none was recorded); permissions named by their screens, none offered that opens
 * nothing for a USER, and such a grant held from before signing nobody out; a SUPERADMIN giving and changing
 * levels; an ADMIN seeing no control on ADMIN and SUPERADMIN rows; Key Management in the menu of those who
 * may use it.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { COMMAND_DEFINITIONS, MESSAGES, type Session, SUPERADMIN_PREFIX } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { profileFor, rng, SimulatedDevice } from '@lendlock/device-sim';
import { REPO_ROOT } from '@lendlock/testkit';
import type { Browser, Page, Request, Response } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { BATCH_LABELS } from '../apps/web/src/features/batch/labels';
import { COMMAND_LABELS } from '../apps/web/src/features/commands/labels';
import { USER_LABELS } from '../apps/web/src/pages/Users/labels';
import { chooseFile, imeiCsv } from './support/batches';
import {
  type ConsolePage,
  fieldLabelled,
  launchBrowser,
  openConsole,
  screenTitle,
  serverCodec,
  sidebarHrefs,
  signIn,
} from './support/browser';
import { apiCall, apiToken, newEnrollmentSecret, randomSeed } from './support/fleet';
import { type RunningServer, runCli, startServer } from './support/server';
import { type Dialogs, labelled, rowWith, watchDialogs } from './support/ui';
import { PASSWORD, type TestUser, USERS } from './support/users';

const ENROLLMENT_SECRET = newEnrollmentSecret();
/** Holds Key Management (so sees it in the menu) and Set Wallpaper (both of its routes). */
const KEYHOLDER = {
  email: 'keys.holder@lendlock.com',
  phone: '9000000041',
  level: 'USER',
  permissions: ['keyManagement', 'setWallpaper'],
} as const satisfies TestUser;
/** Given User Management and Device Action by an earlier version (written into the database below). */
const HOLDER = {
  email: 'old.grants@lendlock.com',
  phone: '9000000042',
  level: 'USER',
  permissions: ['reports'],
} as const satisfies TestUser;
/** Raised to ADMIN by the SUPERADMIN while signed in. */
const PROMOTED = {
  email: 'promoted@lendlock.com',
  phone: '9000000043',
  level: 'USER',
  permissions: ['reports'],
} as const satisfies TestUser;

const LOCK = COMMAND_DEFINITIONS.find((d) => d.screen === 'lockDevice');

let templateDir: string;
let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let device: SimulatedDevice;
let opened: ConsolePage[] = [];

/** SQL on a stopped server's embedded database (PGlite in DATA_DIR/pgdata), e.g. as an earlier version left it. */
async function onStoppedDatabase(dataDir: string, statements: string): Promise<void> {
  const script = [
    "import { PGlite } from '@electric-sql/pglite';",
    'const db = await PGlite.create(process.argv[1]);',
    'await db.exec(process.argv[2]);',
    'await db.close();',
  ].join('\n');
  await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script, join(dataDir, 'pgdata'), statements],
    { cwd: REPO_ROOT },
  );
}

beforeAll(async () => {
  templateDir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-users-'));
  cpSync(inject('templateDataDir'), templateDir, { recursive: true });
  for (const user of [KEYHOLDER, HOLDER, PROMOTED]) {
    await runCli(templateDir, [
      ...['user', 'create', '--email', user.email, '--phone', user.phone, '--level', user.level],
      ...['--password', PASSWORD, '--permissions', user.permissions.join(',')],
    ]);
  }
  // The server refuses these grants to a USER now; migration 0026 removed those it found.
  await onStoppedDatabase(
    templateDir,
    `INSERT INTO user_permissions (user_id, permission_id)
       SELECT u.id, p.id FROM users u, permissions p
       WHERE u.email = '${HOLDER.email}' AND p.permission_name IN ('userManagement', 'deviceAction')`,
  );
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: templateDir, env: () => ({ ENROLLMENT_SECRET }) }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  const seed = randomSeed();
  device = new SimulatedDevice(profileFor(seed, 0, rng(seed)), {
    server: server.baseUrl,
    enrollmentSecret: ENROLLMENT_SECRET,
  });
  // Registered and never connected: a command to it is recorded QUEUED.
  await device.register();
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  if (templateDir) rmSync(templateDir, { recursive: true, force: true });
});

afterEach(async () => {
  try {
    for (const one of opened) {
      expect(await one.cspViolations()).toEqual([]);
      expect(one.pageErrors).toEqual([]);
    }
  } finally {
    await Promise.all(opened.map((one) => one.close()));
    opened = [];
  }
});

/** A browser of its own, signed in as `user`, answering its dialogs. */
async function browserOf(user: TestUser): Promise<{ page: Page; dialogs: Dialogs; session: Session }> {
  const one = await openConsole(browser, server.baseUrl);
  opened.push(one);
  const dialogs = watchDialogs(one.page);
  const session = await signIn(one.page, codec, user);
  return { page: one.page, dialogs, session };
}

const isCall = (script: string) => (r: Request | Response) =>
  new URL(r.url()).pathname === `/api/${script}.php`;
const sentBy = (request: Request): unknown => codec.open(request.postDataJSON());

async function openUsers(page: Page, superadmin = false): Promise<void> {
  await page.goto(superadmin ? `${SUPERADMIN_PREFIX}/userManagement` : '/userManagement');
  await page.getByRole('heading', { name: screenTitle('userManagement') }).waitFor();
  await page.getByRole('table').waitFor();
}

/** The commands the server recorded for an IMEI, as an ADMIN reads them. */
async function commandsOf(imei: string): Promise<{ command: string }[]> {
  const token = await apiToken(server.baseUrl, USERS.admin);
  return (
    await apiCall<{ commands: { command: string }[] }>(server.baseUrl, token, '/api/auditReportByImei.php', {
      imei1: imei,
    })
  ).commands;
}

/** The user's row: forced out by `admin`'s browser through the LOGIN button (keys kept). */
async function forceOut(admin: { page: Page; dialogs: Dialogs }, email: string): Promise<void> {
  await openUsers(admin.page);
  const row = rowWith(admin.page, email);
  admin.dialogs.plan.push('accept', 'dismiss');
  const ended = admin.page.waitForResponse(isCall('updateLoginStatus'));
  await row.getByRole('button', { name: USER_LABELS.forceLogoutAction(email) }).click();
  expect((await ended).status()).toBe(200);
  await row.getByText('LOGOUT', { exact: true }).waitFor();
}

describe('no silent exits', () => {
  it('forced out while on Lock Device, the Submit lands on /login saying why and that the lock was not sent; none was recorded', async () => {
    if (!LOCK) throw new Error('no Lock definition');
    const user = await browserOf(USERS.locker);
    await user.page.goto('/lockDevice');
    await user.page.getByRole('heading', { name: screenTitle('lockDevice') }).waitFor();
    await fieldLabelled(user.page, COMMAND_LABELS.imei).fill(device.imei);

    await forceOut(await browserOf(USERS.admin), USERS.locker.email);

    const refused = user.page.waitForResponse(isCall('locknotification'));
    await user.page.getByRole('button', { name: COMMAND_LABELS.submit, exact: true }).click();
    const response = await refused;
    expect(response.status()).toBe(401);
    expect(codec.open(await response.json())).toMatchObject({ reason: 'ended_by_admin' });
    await user.page.waitForURL((url) => url.pathname === '/login');
    // The URL changes before /login has rendered: wait for the notice, then count it.
    const notice = user.page.getByTestId('session-ended');
    await notice.getByText(MESSAGES.sessionEndedByAdmin, { exact: true }).first().waitFor();
    await expect(notice.getByText(MESSAGES.sessionEndedByAdmin, { exact: true }).count()).resolves.toBe(1);
    await expect(user.page.getByTestId('not-sent').textContent()).resolves.toBe(
      MESSAGES.notSent(COMMAND_LABELS.commandToImei(LOCK.displayName, device.imei)),
    );
    // Reported there, not alerted; and the session is gone from the browser.
    expect(user.dialogs.seen).toEqual([]);
    expect(await user.page.evaluate(() => localStorage.getItem('userSession'))).toBeNull();
    expect(await commandsOf(device.imei)).toEqual([]);

    // Signed in again, the same Submit is recorded (so the check above could have failed), and the
    // note is gone from /login.
    await signIn(user.page, codec, USERS.locker);
    await user.page.goto('/lockDevice');
    await fieldLabelled(user.page, COMMAND_LABELS.imei).fill(device.imei);
    await user.page.getByRole('button', { name: COMMAND_LABELS.submit, exact: true }).click();
    await expect(user.dialogs.next()).resolves.toEqual({ type: 'alert', message: LOCK.successMessage });
    expect((await commandsOf(device.imei)).map((c) => c.command)).toEqual(['LOCK']);
    await user.page.goto('/login');
    await user.page.getByRole('button', { name: 'Login', exact: true }).waitFor();
    await expect(user.page.getByTestId('session-ended').count()).resolves.toBe(0);
  });

  it('forced out while on Lock Device, a batch file chosen lands on /login saying the upload was not sent; no batch was recorded', async () => {
    if (!LOCK) throw new Error('no Lock definition');
    const user = await browserOf(USERS.locker);
    await user.page.goto('/lockDevice');
    const panel = user.page.getByTestId('batch-panel');
    await panel.waitFor();

    const before = await commandsOf(device.imei);
    await forceOut(await browserOf(USERS.admin), USERS.locker.email);

    const refused = user.page.waitForResponse(isCall('bulkLockCopy'));
    await chooseFile(panel, 'overdue.csv', imeiCsv([device.imei]));
    expect((await refused).status()).toBe(401);
    await user.page.waitForURL((url) => url.pathname === '/login');
    // The URL changes before /login has rendered: wait for the notice, then count it.
    const notice = user.page.getByTestId('session-ended');
    await notice.getByText(MESSAGES.sessionEndedByAdmin, { exact: true }).first().waitFor();
    await expect(notice.getByText(MESSAGES.sessionEndedByAdmin, { exact: true }).count()).resolves.toBe(1);
    await expect(user.page.getByTestId('not-sent').textContent()).resolves.toBe(
      MESSAGES.notSent(BATCH_LABELS.uploadInWords(LOCK.displayName, 'overdue.csv')),
    );
    // Reported there, not alerted; and nothing reached the device's history.
    expect(user.dialogs.seen).toEqual([]);
    expect(await commandsOf(device.imei)).toEqual(before);
  });

  it('a level change by the SUPERADMIN ends the user’s session: their next call lands on /login saying an administrator did', async () => {
    const user = await browserOf(PROMOTED);
    const root = await browserOf(USERS.superadmin);
    await openUsers(root.page, true);
    await root.page
      .getByRole('button', { name: USER_LABELS.editAction(PROMOTED.email), exact: true })
      .click();
    const modal = root.page.getByRole('dialog', { name: USER_LABELS.editUser });
    await labelled(modal, USER_LABELS.level).selectOption('ADMIN');
    await modal.getByText(USER_LABELS.levelChangeSignsOut).waitFor();
    // An ADMIN has nothing to grant: no checkboxes.
    await modal.getByText(USER_LABELS.passesEveryPermission('ADMIN')).waitFor();
    await expect(modal.getByRole('checkbox').count()).resolves.toBe(0);
    const request = root.page.waitForRequest(isCall('updateUser'));
    await modal.getByRole('button', { name: USER_LABELS.save, exact: true }).click();
    expect(sentBy(await request)).toMatchObject({
      email: PROMOTED.email,
      userlevel: 'ADMIN',
      permissions: [],
    });
    await expect(root.dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.userUpdated });
    const row = rowWith(root.page, PROMOTED.email);
    await row.getByRole('cell', { name: 'ADMIN', exact: true }).waitFor();
    await row.getByText('LOGOUT', { exact: true }).waitFor();

    // The dashboard's first call is refused.
    await user.page.goto('/');
    await user.page.waitForURL((url) => url.pathname === '/login');
    await expect(user.page.getByTestId('session-ended').textContent()).resolves.toBe(
      MESSAGES.sessionEndedByAdmin,
    );
    // Signed in again, they have the ADMIN's screens.
    await signIn(user.page, codec, { ...PROMOTED, level: 'ADMIN' });
    await user.page.getByTestId('nav-userManagement').waitFor();
  });
});

describe('User Management that makes sense', () => {
  it('a USER holding User Management and Device Action from before sees the unauthorised page there and stays signed in', async () => {
    const { page, session } = await browserOf(HOLDER);
    expect(session.permissions.map((p) => p.permission_name).sort()).toEqual([
      'deviceAction',
      'reports',
      'userManagement',
    ]);
    expect(await sidebarHrefs(page)).not.toContain('/userManagement');
    for (const path of [
      '/userManagement',
      `${SUPERADMIN_PREFIX}/deviceAction`,
      `${SUPERADMIN_PREFIX}/userManagement`,
    ]) {
      await page.goto(path);
      await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
      expect(new URL(page.url()).pathname).toBe(path);
    }
    // Still signed in: the screen they hold works, with the same session.
    await page.goto('/reports');
    await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
    const stored = await page.evaluate(() => localStorage.getItem('userSession'));
    expect(stored).not.toBeNull();
    const token = await apiToken(server.baseUrl, USERS.admin);
    const listed = await apiCall<{ items: { email: string; loginstatus: string }[] }>(
      server.baseUrl,
      token,
      '/api/getUsers.php',
    );
    expect(listed.items.find((u) => u.email === HOLDER.email)?.loginstatus).toBe('LOGIN');
  });

  it('an ADMIN sees permissions by screen name, no control on ADMIN and SUPERADMIN rows, and no level to give', async () => {
    const admin = await browserOf(USERS.admin);
    await openUsers(admin.page);
    for (const email of [USERS.admin.email, USERS.superadmin.email]) {
      const row = rowWith(admin.page, email);
      await row.waitFor();
      expect(await row.getByRole('button').count()).toBe(0);
      await expect(row.getByRole('cell').nth(5).textContent()).resolves.toBe('ACTIVE');
    }
    const locker = rowWith(admin.page, USERS.locker.email);
    await locker.getByRole('button', { name: USER_LABELS.editAction(USERS.locker.email) }).waitFor();
    await locker
      .getByRole('button', { name: USER_LABELS.statusAction(USERS.locker.email, 'INACTIVE') })
      .waitFor();

    // The grants held from before show by their screens' names; the Edit modal does not offer them, so
    // saving keeps only what a USER can use.
    await rowWith(admin.page, HOLDER.email).getByText('3 permissions', { exact: true }).hover();
    const list = admin.page.getByRole('list', { name: USER_LABELS.permissionsOf(HOLDER.email) });
    await list.getByRole('listitem').first().waitFor();
    await expect(list.getByRole('listitem').allTextContents()).resolves.toEqual([
      'User Management',
      'Reports',
      'Device Action',
    ]);
    await admin.page.mouse.move(0, 0);
    const permissionsListed = admin.page.waitForResponse(isCall('getPermissions'));
    await admin.page.getByRole('button', { name: USER_LABELS.editAction(HOLDER.email), exact: true }).click();
    const modal = admin.page.getByRole('dialog', { name: USER_LABELS.editUser });
    const permissions = (
      codec.open(await (await permissionsListed).json()) as {
        permissions: { id: number; permission_name: string }[];
      }
    ).permissions;
    await modal.getByLabel('Reports', { exact: true }).waitFor();
    await expect(modal.getByLabel('Reports', { exact: true }).isChecked()).resolves.toBe(true);
    for (const hidden of ['User Management', 'Device Action', 'Set Wallpaper Batch'])
      await expect(modal.getByLabel(hidden, { exact: true }).count()).resolves.toBe(0);
    await expect(modal.getByLabel('Set Wallpaper', { exact: true }).count()).resolves.toBe(1);
    await expect(labelled(modal, USER_LABELS.level).count()).resolves.toBe(0);
    const request = admin.page.waitForRequest(isCall('updateUser'));
    await modal.getByRole('button', { name: USER_LABELS.save, exact: true }).click();
    const reports = permissions.find((p) => p.permission_name === 'reports')?.id;
    expect(sentBy(await request)).toEqual({
      id: expect.any(Number),
      email: HOLDER.email,
      phone: HOLDER.phone,
      permissions: [reports],
    });
    await expect(admin.dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.userUpdated });
    await rowWith(admin.page, HOLDER.email).getByText('1 permission', { exact: true }).waitFor();

    // Add User: a USER's form, no level.
    await admin.page.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
    const add = admin.page.getByRole('dialog', { name: USER_LABELS.addUser });
    await add.getByRole('checkbox').first().waitFor();
    await expect(labelled(add, USER_LABELS.level).count()).resolves.toBe(0);
    await expect(add.getByLabel('User Management', { exact: true }).count()).resolves.toBe(0);
  });

  it('a SUPERADMIN creates an ADMIN in the console, and manages ADMIN rows', async () => {
    const root = await browserOf(USERS.superadmin);
    await openUsers(root.page, true);
    await root.page.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
    const modal = root.page.getByRole('dialog', { name: USER_LABELS.addUser });
    await modal.getByRole('checkbox').first().waitFor();
    await expect(labelled(modal, USER_LABELS.level).inputValue()).resolves.toBe('USER');
    await labelled(modal, USER_LABELS.email).fill('team.lead@lendlock.com');
    await labelled(modal, USER_LABELS.phone).fill('9000000044');
    await labelled(modal, USER_LABELS.password).fill(PASSWORD);
    await modal.getByLabel('Reports', { exact: true }).check();
    await labelled(modal, USER_LABELS.level).selectOption('ADMIN');
    await modal.getByText(USER_LABELS.passesEveryPermission('ADMIN')).waitFor();
    await expect(modal.getByRole('checkbox').count()).resolves.toBe(0);
    const request = root.page.waitForRequest(isCall('addUser'));
    await modal.getByRole('button', { name: USER_LABELS.addUser, exact: true }).click();
    expect(sentBy(await request)).toEqual({
      email: 'team.lead@lendlock.com',
      phone: '9000000044',
      password: PASSWORD,
      permissions: [],
      userlevel: 'ADMIN',
    });
    await expect(root.dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.userAdded });
    const row = rowWith(root.page, 'team.lead@lendlock.com');
    await row.getByRole('cell', { name: 'ADMIN', exact: true }).waitFor();
    // A SUPERADMIN has every control on ADMIN rows.
    await row.getByRole('button', { name: USER_LABELS.editAction('team.lead@lendlock.com') }).waitFor();
    await row
      .getByRole('button', { name: USER_LABELS.statusAction('team.lead@lendlock.com', 'INACTIVE') })
      .waitFor();
    // The new ADMIN signs in to an ADMIN's console.
    const lead = await browserOf({
      email: 'team.lead@lendlock.com',
      phone: '9000000044',
      level: 'ADMIN',
      permissions: [],
    });
    await lead.page.getByTestId('nav-userManagement').waitFor();
  });

  it('Key Management is in the menu of ADMIN, SUPERADMIN and a USER holding it, and of no other USER', async () => {
    for (const [user, path] of [
      [USERS.admin, '/keyManagement'],
      [USERS.superadmin, `${SUPERADMIN_PREFIX}/keyManagement`],
    ] as const) {
      const { page } = await browserOf(user);
      expect(await sidebarHrefs(page)).toContain(path);
    }
    const locker = await browserOf(USERS.locker);
    expect(await sidebarHrefs(locker.page)).not.toContain('/keyManagement');

    const holder = await browserOf(KEYHOLDER);
    expect(await sidebarHrefs(holder.page)).toContain('/keyManagement');
    await holder.page.getByTestId('nav-keyManagement').click();
    await holder.page.getByRole('heading', { name: screenTitle('keyManagement') }).waitFor();
    expect(new URL(holder.page.url()).pathname).toBe('/keyManagement');
    // One Set Wallpaper grant opens both of its routes.
    for (const path of ['/setWallpaper', '/batch']) {
      await holder.page.goto(path);
      await holder.page.getByRole('heading', { name: screenTitle('setWallpaper') }).waitFor();
    }
  });
});
