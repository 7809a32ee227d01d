/**
 * Every command screen against the built console, a real server and simulated devices: each single
 * command reaches its device (exact success alert, the device's changed state, the live status reaching
 * executed), every validation message of every form, the unauthorised page, the device action to one
 * device and to ALL, and the retailer's dynamic action table. One server and one fleet for the file;
 * one sign-in per role.
 */
import {
  COMMAND_DEFINITIONS,
  type CommandDefinition,
  DEVICE_ACTION_SUCCESS,
  type DeviceState,
  dynamicActionSuccess,
  MESSAGES,
  notifyMessage,
  type Session,
  SUPERADMIN_PREFIX,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { Fleet, profileFor, rng, SimulatedDevice } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { COMMAND_SCREEN_NAMES } from '../apps/web/src/features/commands/commandScreens';
import { localIsoDate, toDisplayDate } from '../apps/web/src/features/commands/forms';
import { COMMAND_FORM_MESSAGES, COMMAND_LABELS } from '../apps/web/src/features/commands/labels';
import { DEVICE_ACTION_LABELS } from '../apps/web/src/pages/DeviceAction/labels';
import {
  type ConsolePage,
  fieldLabelled,
  launchBrowser,
  openConsole,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import {
  type ApiSession,
  apiSession,
  labelledIn,
  nextDialogs,
  type RetailerTestUser,
  templateWithUsers,
} from './support/commandFleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

const ENROLLMENT_SECRET = 'e2e-commands-enrollment-secret-32';
const RETAILER: RetailerTestUser = {
  email: 'retailer@lendlock.com',
  phone: '9000000030',
  level: 'USER',
  permissions: ['blockApp', 'unblockapp'],
  retailerPhone: '9812345670',
};

const SINGLE = COMMAND_DEFINITIONS.filter((d) => d.single);

/**
 * What each single command does to a fresh device (docs/device-protocol.md §4), typed here by hand. `arrange`
 * first puts the device in the opposite state through the API, so the console's command visibly changes it.
 */
const EXPECTED: Record<string, { arrange?: string; state?: Partial<DeviceState> }> = {
  releaseDevice: { state: { released: true } },
  lockDevice: { state: { locked: true } },
  unlockDevice: { arrange: 'lock', state: { locked: false } },
  blockApp: { state: { appsBlocked: true } },
  unblockapp: { arrange: 'blockapp', state: { appsBlocked: false } },
  enableNotification: {},
  formattedDevice: {},
  disableApp: { state: { greyed: 'level1' } },
  gradeDisableApp: { state: { greyed: 'level2' } },
  restoreApp: { arrange: 'disableapp', state: { greyed: null } },
  removeWallpaper: { state: { wallpaper: false } },
  activateAlarm: { state: { alarm: true } },
  deactivateAlarm: { arrange: 'activatealarm', state: { alarm: false } },
  enableCamera: { arrange: 'disablecamera', state: { cameraDisabled: false } },
  disableCamera: { state: { cameraDisabled: true } },
  enableCredit: { state: { credit: true } },
  revokeCredit: { arrange: 'credit', state: { credit: false } },
};

const addDays = (days: number) => {
  const date = new Date();
  date.setDate(date.getDate() + days);
  return localIsoDate(date);
};

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let template: { dir: string; dispose(): void };
let fleet: Fleet;
let retailerDevice: SimulatedDevice;
/** One fleet device per single command, then spares for the validation and device action tests. */
const deviceOf = new Map<string, SimulatedDevice>();
let spare: SimulatedDevice;
let deviceActionTarget: SimulatedDevice;
let adminApi: ApiSession;
const consoles: ConsolePage[] = [];

async function signedIn(user: Parameters<typeof signIn>[2]): Promise<{ page: Page; session: Session }> {
  const consolePage = await openConsole(browser, server.baseUrl);
  consoles.push(consolePage);
  const session = await signIn(consolePage.page, codec, user);
  return { page: consolePage.page, session };
}

beforeAll(async () => {
  template = await templateWithUsers(inject('templateDataDir'), [RETAILER]);
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: template.dir, env: () => ({ ENROLLMENT_SECRET }) }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  const options = { server: server.baseUrl, enrollmentSecret: ENROLLMENT_SECRET };
  fleet = new Fleet({ ...options, devices: SINGLE.length + 2, seed: 51 });
  retailerDevice = new SimulatedDevice(
    { ...profileFor(52, 0, rng(52)), retailer_phone: RETAILER.retailerPhone },
    options,
  );
  await Promise.all([fleet.start(), retailerDevice.register().then(() => retailerDevice.connect())]);
  SINGLE.forEach((definition, index) => {
    const device = fleet.devices[index];
    if (device) deviceOf.set(definition.screen, device);
  });
  [spare, deviceActionTarget] = fleet.devices.slice(SINGLE.length) as [SimulatedDevice, SimulatedDevice];
  adminApi = await apiSession(server.baseUrl, USERS.admin.email);
});

afterAll(async () => {
  for (const consolePage of consoles) {
    // Every page ran without an uncaught error or a blocked style or script.
    expect(consolePage.pageErrors).toEqual([]);
    expect(await consolePage.cspViolations()).toEqual([]);
  }
  await Promise.all([fleet?.stop(), retailerDevice?.disconnect()]);
  await browser?.close();
  await server?.stop();
  template?.dispose();
});

/**
 * Opens a screen through its sidebar link as a user would (no reload), or by URL when it has none or is
 * already open (so every test starts from a fresh screen).
 */
async function goTo(page: Page, name: string, superadmin = false) {
  const path = superadmin ? `${SUPERADMIN_PREFIX}/${name}` : `/${name}`;
  const link = page.getByTestId(`nav-${name}`);
  if (new URL(page.url()).pathname !== path && (await link.count()) === 1) await link.click();
  else await page.goto(path);
  await page.waitForURL((url) => url.pathname === path);
}

/** Opens a screen and waits for its title. */
async function open(page: Page, name: string, superadmin = false) {
  await goTo(page, name, superadmin);
  await page.getByRole('heading', { name: screenTitle(name), exact: true }).waitFor();
}

/** The decrypted reply of the next call to `/api/<script>`. */
async function replyOf(
  page: Page,
  script: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await page.waitForResponse((r) => new URL(r.url()).pathname === `/api/${script}`);
  return { status: response.status(), body: codec.open(await response.json()) as Record<string, unknown> };
}

/** Counts the calls to `/api/<script>` the page makes from now on. */
function countCalls(page: Page, script: string): { readonly count: number } {
  const counter = { count: 0 };
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === `/api/${script}`) counter.count++;
  });
  return counter;
}

const submit = (page: Page) => page.getByRole('button', { name: COMMAND_LABELS.submit, exact: true }).click();
const liveStatus = (page: Page) => page.getByTestId('command-status');

/** Arranges the device through the API and waits until it has executed the command. */
async function arrange(device: SimulatedDevice, action: string) {
  const reply = await adminApi.post('locknotification.php', { imei: device.imei, action });
  expect(reply.status).toBe(200);
  const id = String(reply.body.transactionId);
  await waitUntil(`${device.imei} to execute ${action}`, () => device.executions.has(id));
}

/** Fills a command's single form for `imei` (notify: a Pre Due reminder in three days). */
async function fillSingleForm(page: Page, definition: CommandDefinition, imei: string) {
  if (definition.input === 'grade') await fieldLabelled(page, COMMAND_LABELS.grade).selectOption('level2');
  if (definition.input === 'notify') {
    await fieldLabelled(page, COMMAND_LABELS.customerName).fill('Asha Verma');
    await fieldLabelled(page, COMMAND_LABELS.template).selectOption({ label: 'Pre Due' });
    await fieldLabelled(page, COMMAND_LABELS.amount).fill('1499.5');
    await fieldLabelled(page, COMMAND_LABELS.date).fill(addDays(3));
  }
  await fieldLabelled(page, COMMAND_LABELS.imei).fill(imei);
}

describe('the device action (SUPERADMIN)', () => {
  let page: Page;
  beforeAll(async () => {
    ({ page } = await signedIn(USERS.superadmin));
  });

  it('ALL reaches every enrolled simulated device and the progress view counts their answers', async () => {
    const everyDevice = [...fleet.devices, retailerDevice];
    await open(page, 'deviceAction', true);
    const card = page.getByTestId('device-action-all');
    await card.getByText(DEVICE_ACTION_LABELS.batchTitle).waitFor();
    await labelledIn(card, DEVICE_ACTION_LABELS.action).selectOption('REBOOT');
    const dialogs = nextDialogs(page, 2);
    const reply = replyOf(page, 'adminlocknotification.php');
    await card.getByRole('button', { name: DEVICE_ACTION_LABELS.runOnAll }).click();
    expect(await dialogs).toEqual([
      { type: 'confirm', message: DEVICE_ACTION_LABELS.confirmAll('REBOOT') },
      { type: 'alert', message: DEVICE_ACTION_SUCCESS },
    ]);
    expect((await reply).body).toMatchObject({ message: DEVICE_ACTION_SUCCESS, total: everyDevice.length });
    await waitUntil('every device to reboot', () =>
      everyDevice.every((d) => d.received.some((m) => m.command === 'REBOOT')),
    );
    const progress = page.getByTestId('all-devices-progress');
    await progress.getByText(`${DEVICE_ACTION_LABELS.total}: ${everyDevice.length}`).waitFor();
    await progress.getByText(DEVICE_ACTION_LABELS.done(everyDevice.length, everyDevice.length)).waitFor();
    await expect(progress.getByTestId('all-devices-EXECUTED').textContent()).resolves.toBe(
      `EXECUTED${everyDevice.length}`,
    );
  });

  it('one IMEI gets the action, the success alert and its live status', async () => {
    await open(page, 'deviceAction', true);
    const card = page.getByTestId('device-action-single');
    await labelledIn(card, DEVICE_ACTION_LABELS.imeiOrAll).fill(deviceActionTarget.imei);
    await labelledIn(card, DEVICE_ACTION_LABELS.action).selectOption('UPDATE');
    const dialogs = nextDialogs(page, 1);
    const reply = replyOf(page, 'adminlocknotification.php');
    await card.getByRole('button', { name: DEVICE_ACTION_LABELS.submit }).click();
    expect(await dialogs).toEqual([{ type: 'alert', message: DEVICE_ACTION_SUCCESS }]);
    const id = String((await reply).body.transactionId);
    await waitUntil('the device to update', () => deviceActionTarget.executions.has(id));
    expect(deviceActionTarget.received.find((m) => m.id === id)?.command).toBe('UPDATE');
    await liveStatus(page).getByText('executed', { exact: true }).waitFor();
  });

  it('typing is limited to up to 15 digits or a prefix of ALL, and submitting shows each message', async () => {
    await open(page, 'deviceAction', true);
    const card = page.getByTestId('device-action-single');
    const imei = labelledIn(card, DEVICE_ACTION_LABELS.imeiOrAll);
    const calls = countCalls(page, 'adminlocknotification.php');

    await imei.pressSequentially('ALX');
    await expect(imei.inputValue()).resolves.toBe('AL');
    await card.getByText(MESSAGES.deviceActionTyping, { exact: true }).waitFor();
    await imei.fill('');
    await imei.pressSequentially('1234567890123456');
    await expect(imei.inputValue()).resolves.toBe('123456789012345');
    await card.getByText(MESSAGES.deviceActionTyping, { exact: true }).waitFor();

    await imei.fill('AL');
    await card.getByRole('button', { name: DEVICE_ACTION_LABELS.submit }).click();
    await card.getByText(MESSAGES.deviceActionImei, { exact: true }).waitFor();

    await imei.fill('all');
    await card.getByRole('button', { name: DEVICE_ACTION_LABELS.submit }).click();
    await card.getByText(MESSAGES.deviceActionRequired, { exact: true }).waitFor();

    // The select offers REBOOT and UPDATE only; a tampered option is still refused.
    const select = labelledIn(card, DEVICE_ACTION_LABELS.action);
    await select.evaluate((element) => {
      const option = document.createElement('option');
      option.value = 'SHUTDOWN';
      option.textContent = 'SHUTDOWN';
      element.appendChild(option);
    });
    await select.selectOption('SHUTDOWN');
    await card.getByRole('button', { name: DEVICE_ACTION_LABELS.submit }).click();
    await card.getByText(MESSAGES.deviceActionInvalid, { exact: true }).waitFor();
    expect(calls.count).toBe(0);
  });
});

describe('single commands (ADMIN)', () => {
  let page: Page;
  beforeAll(async () => {
    ({ page } = await signedIn(USERS.admin));
  });

  it('every screen of the definition table renders the one command screen with its title', async () => {
    for (const name of COMMAND_SCREEN_NAMES) {
      await open(page, name);
      const single = page.getByTestId('single-form');
      // Set Wallpaper (and its `batch` alias) is batch only: no single form.
      await expect(single.count()).resolves.toBe(name === 'setWallpaper' || name === 'batch' ? 0 : 1);
      // Only a retailer user gets the dynamic action table.
      await expect(page.getByTestId('dynamic-action-table').count()).resolves.toBe(0);
    }
    expect(COMMAND_SCREEN_NAMES).toContain('batch');
    expect(screenTitle('setWallpaper')).toBe('IMEI Set Wallpaper: Batch Upload');
  });

  for (const definition of SINGLE) {
    it(`${definition.displayName}: the exact success alert, the device obeys, the live status reaches executed`, async () => {
      const device = deviceOf.get(definition.screen);
      const expected = EXPECTED[definition.screen];
      if (!device || !expected) throw new Error(`no device or expectation for ${definition.screen}`);
      if (expected.arrange) await arrange(device, expected.arrange);

      await open(page, definition.screen);
      await fillSingleForm(page, definition, device.imei);
      const script = definition.action === 'formatteddevice' ? 'formattedDevice.php' : 'locknotification.php';
      const reply = replyOf(page, script);
      const expectedDialogs = [
        ...(definition.confirm ? [{ type: 'confirm', message: definition.confirm }] : []),
        { type: 'alert', message: definition.successMessage },
      ];
      const dialogs = nextDialogs(page, expectedDialogs.length);
      await submit(page);
      if (definition.input === 'notify') {
        await page.getByTestId('notify-preview').waitFor();
        await page.getByRole('button', { name: COMMAND_LABELS.sendNotification }).click();
      }
      expect(await dialogs).toEqual(expectedDialogs);
      const { status, body } = await reply;
      expect(status).toBe(200);
      const id = String(body.transactionId);
      await liveStatus(page).getByText('executed', { exact: true }).waitFor();

      if (definition.action === 'formatteddevice') {
        // The formatted phone has no agent left: the server de-enrolls it.
        const details = await adminApi.post('devicedetails.php', { imei: device.imei });
        expect(details.body.items).toMatchObject([{ imei1: device.imei, claimstatus: 'DEENROLLED' }]);
        expect(device.received.some((m) => m.id === id)).toBe(false);
        return;
      }
      await waitUntil(`${device.imei} to execute ${definition.raw}`, () => device.executions.has(id));
      const message = device.received.find((m) => m.id === id);
      expect(message?.command).toBe(definition.raw);
      if (expected.state) expect(device.state).toMatchObject(expected.state);
      if (definition.input === 'notify') {
        expect(message?.options).toEqual({
          caseType: 'Pre',
          message: notifyMessage('Pre', {
            name: 'Asha Verma',
            amount: '1499.50',
            date: toDisplayDate(addDays(3)),
          }).message,
        });
      }
    });
  }

  it("a command the server refuses alerts the server's message as-is", async () => {
    const released = deviceOf.get('releaseDevice') as SimulatedDevice;
    for (const [imei, status] of [
      ['100000000000000', 404],
      [released.imei, 409],
    ] as const) {
      await open(page, 'lockDevice');
      await fieldLabelled(page, COMMAND_LABELS.imei).fill(imei);
      const reply = replyOf(page, 'locknotification.php');
      const dialogs = nextDialogs(page, 1);
      await submit(page);
      const answer = await reply;
      expect(answer.status).toBe(status);
      expect(await dialogs).toEqual([{ type: 'alert', message: answer.body.message }]);
    }
  });

  it('a single IMEI input shows the hint until it holds 15 digits from 100000000000000, sending nothing', async () => {
    await open(page, 'lockDevice');
    const calls = countCalls(page, 'locknotification.php');
    const imei = fieldLabelled(page, COMMAND_LABELS.imei);
    const hint = page.getByText(MESSAGES.imeiHint, { exact: true });
    await submit(page);
    await hint.waitFor();
    await imei.fill('12345');
    await expect(hint.count()).resolves.toBe(1);
    await submit(page);
    await hint.waitFor();
    await imei.fill('000000000000000');
    await submit(page);
    await hint.waitFor();
    await imei.fill('');
    await imei.pressSequentially('35a6-9');
    await expect(imei.inputValue()).resolves.toBe('3569');
    expect(calls.count).toBe(0);
  });

  it('Release asks for confirmation; declining sends nothing', async () => {
    await open(page, 'releaseDevice');
    const calls = countCalls(page, 'locknotification.php');
    await fieldLabelled(page, COMMAND_LABELS.imei).fill(spare.imei);
    const dialogs = nextDialogs(page, 1, 'dismiss');
    await submit(page);
    expect(await dialogs).toEqual([{ type: 'confirm', message: MESSAGES.releaseConfirm }]);
    // Barrier: a later release, accepted, of an IMEI no device has (refused, nothing changes) is sent; a
    // call of the declined one would have gone out before it.
    await fieldLabelled(page, COMMAND_LABELS.imei).fill('100000000000000');
    const reply = replyOf(page, 'locknotification.php');
    const accepted = nextDialogs(page, 2);
    await submit(page);
    expect((await reply).status).toBe(404);
    expect((await accepted).map((d) => d.type)).toEqual(['confirm', 'alert']);
    expect(calls.count).toBe(1);
    expect(spare.state.released).toBe(false);
  });

  it('Graded Disable App keeps the IMEI input disabled until a grade is chosen', async () => {
    await open(page, 'gradeDisableApp');
    const imei = fieldLabelled(page, COMMAND_LABELS.imei);
    const grade = fieldLabelled(page, COMMAND_LABELS.grade);
    await expect(imei.isDisabled()).resolves.toBe(true);
    const options = await grade
      .locator('option')
      .evaluateAll((all) => all.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    expect(options).toEqual([
      ['', COMMAND_LABELS.selectGrade],
      ['level1', 'Grade 1'],
      ['level2', 'Grade 2'],
    ]);
    await grade.selectOption('level1');
    await expect(imei.isEnabled()).resolves.toBe(true);
  });

  describe('Enable Notification single form', () => {
    const field = (label: string) => fieldLabelled(page, label);

    it('an empty form alerts the template message and names every other required field', async () => {
      await open(page, 'enableNotification');
      const dialogs = nextDialogs(page, 1);
      await submit(page);
      expect(await dialogs).toEqual([{ type: 'alert', message: MESSAGES.selectTemplate }]);
      for (const text of [
        COMMAND_FORM_MESSAGES.nameRequired,
        MESSAGES.imeiHint,
        MESSAGES.selectTemplate,
        COMMAND_FORM_MESSAGES.amountRequired,
        COMMAND_FORM_MESSAGES.dateRequired,
      ]) {
        await page.getByText(text, { exact: true }).waitFor();
      }
    });

    it('the templates are Pre Due (1), Due Date (2) and Post Due Date (3)', async () => {
      await open(page, 'enableNotification');
      const options = await field(COMMAND_LABELS.template)
        .locator('option')
        .evaluateAll((all) => all.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
      expect(options).toEqual([
        ['', COMMAND_LABELS.selectTemplate],
        ['1', 'Pre Due'],
        ['2', 'Due Date'],
        ['3', 'Post Due Date'],
      ]);
    });

    it('the amount takes digits with up to 2 decimals, written with 2 on blur; zero is refused', async () => {
      await open(page, 'enableNotification');
      const amount = field(COMMAND_LABELS.amount);
      await amount.pressSequentially('12a.345');
      await expect(amount.inputValue()).resolves.toBe('12.34');
      await amount.fill('');
      await amount.pressSequentially('1499.5');
      await field(COMMAND_LABELS.customerName).click();
      await expect(amount.inputValue()).resolves.toBe('1499.50');
      await amount.fill('');
      await amount.pressSequentially('0');
      await field(COMMAND_LABELS.customerName).click();
      await expect(amount.inputValue()).resolves.toBe('0.00');
      await field(COMMAND_LABELS.template).selectOption('2');
      await submit(page);
      await page.getByText(COMMAND_FORM_MESSAGES.amountPositive, { exact: true }).waitFor();
    });

    it('Pre Due needs today or later, Post Due today or earlier, Due Date disables the date (today)', async () => {
      await open(page, 'enableNotification');
      await field(COMMAND_LABELS.customerName).fill('Asha Verma');
      await field(COMMAND_LABELS.imei).fill(spare.imei);
      await field(COMMAND_LABELS.amount).fill('100');
      const date = field(COMMAND_LABELS.date);

      await field(COMMAND_LABELS.template).selectOption('1');
      await date.fill(addDays(-1));
      await submit(page);
      await page.getByText(COMMAND_FORM_MESSAGES.preDueDate, { exact: true }).waitFor();

      await field(COMMAND_LABELS.template).selectOption('3');
      await date.fill(addDays(1));
      await submit(page);
      await page.getByText(COMMAND_FORM_MESSAGES.postDueDate, { exact: true }).waitFor();

      await field(COMMAND_LABELS.template).selectOption('2');
      await expect(date.isDisabled()).resolves.toBe(true);
      await expect(date.inputValue()).resolves.toBe(localIsoDate());
    });

    it('shows the generated header and text with ₹ before sending; cancelling sends nothing', async () => {
      await open(page, 'enableNotification');
      const calls = countCalls(page, 'locknotification.php');
      await field(COMMAND_LABELS.customerName).fill('Asha Verma');
      await field(COMMAND_LABELS.imei).fill(spare.imei);
      await field(COMMAND_LABELS.template).selectOption('3');
      await field(COMMAND_LABELS.amount).fill('2500');
      await field(COMMAND_LABELS.date).fill(addDays(-2));
      await submit(page);
      const expected = notifyMessage('Post', {
        name: 'Asha Verma',
        amount: '2500',
        date: toDisplayDate(addDays(-2)),
      });
      await expect(page.getByTestId('notify-preview-header').textContent()).resolves.toBe(expected.header);
      await expect(page.getByTestId('notify-preview-message').textContent()).resolves.toBe(expected.message);
      expect(expected.message).toContain('₹2,500.00');
      await page.getByRole('button', { name: COMMAND_LABELS.cancel, exact: true }).click();
      await page.getByTestId('notify-preview').waitFor({ state: 'detached' });
      expect(calls.count).toBe(0);
    });
  });
});

describe('a USER without the permission', () => {
  it('sees the unauthorised page on every command screen', async () => {
    const { page } = await signedIn(USERS.viewer);
    for (const name of COMMAND_SCREEN_NAMES) {
      await goTo(page, name);
      await page.getByTestId('unauthorised').getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
      await expect(page.getByTestId('single-form').count()).resolves.toBe(0);
    }
  });
});

describe("the retailer's dynamic action table", () => {
  let page: Page;
  let session: Session;
  beforeAll(async () => {
    ({ page, session } = await signedIn(RETAILER));
  });

  const rowImei = () => fieldLabelled(page, COMMAND_LABELS.rowImei(1));
  const rowAction = (label: string) =>
    page.getByRole('button', { name: COMMAND_LABELS.rowAction(label, 1), exact: true });

  it("runs each action on the retailer's own device with the client code and says so", async () => {
    expect(session.retailer_phone).toBe(RETAILER.retailerPhone);
    await open(page, 'blockApp');
    await page.getByTestId('dynamic-action-table').waitFor();
    await rowImei().fill(retailerDevice.imei);

    for (const [label, action, state] of [
      ['Block', 'blockapp', { appsBlocked: true }],
      ['Unblock', 'unblockapp', { appsBlocked: false }],
    ] as const) {
      const request = page.waitForRequest((r) => new URL(r.url()).pathname === '/api/locknotification.php');
      const reply = replyOf(page, 'locknotification.php');
      const dialogs = nextDialogs(page, 1);
      await rowAction(label).click();
      expect(await dialogs).toEqual([{ type: 'alert', message: dynamicActionSuccess(label) }]);
      expect(codec.open((await request).postDataJSON())).toMatchObject({
        imei: retailerDevice.imei,
        action,
        user: RETAILER.email,
        clientof: expect.any(String),
        retailerNumber: RETAILER.retailerPhone,
      });
      const id = String((await reply).body.transactionId);
      await waitUntil(`${label} on the retailer device`, () => retailerDevice.executions.has(id));
      expect(retailerDevice.state).toMatchObject(state);
      await page.getByTestId('dynamic-status-1').getByText('executed', { exact: true }).waitFor();
    }
  });

  it("another retailer's device is refused with the server's message", async () => {
    await open(page, 'blockApp');
    await rowImei().fill(spare.imei);
    const reply = replyOf(page, 'locknotification.php');
    const dialogs = nextDialogs(page, 1);
    await rowAction('Block').click();
    const answer = await reply;
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(await dialogs).toEqual([{ type: 'alert', message: answer.body.message }]);
    expect(spare.state.appsBlocked).toBe(false);
  });

  it("'Authorization Failed' clears all storage and goes to /login", async () => {
    await open(page, 'blockApp');
    await page.evaluate(() => window.sessionStorage.setItem('marker', 'x'));
    // The session ends on the server (as a forced logout or an expiry would).
    await fetch(`${server.baseUrl}/api/logout.php`, {
      method: 'POST',
      headers: { 'X-API-Key': session.token },
    });
    await rowImei().fill(retailerDevice.imei);
    await rowAction('Block').click();
    await page.waitForURL((url) => url.pathname === '/login');
    await expect(
      page.evaluate(() => ({ local: window.localStorage.length, session: window.sessionStorage.length })),
    ).resolves.toEqual({ local: 0, session: 0 });
  });
});
