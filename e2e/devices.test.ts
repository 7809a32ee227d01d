/**
 * The device screens in a real browser against a real server with a simulated fleet:
 * Dashboard, Device Details, Audit Report By IMEI, Device Version Detail and Last Command Reports.
 */
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import {
  type DeviceRecord,
  ERROR_REPORT_FILE_NAME,
  IMEI_CSV_NO_DATA_NOTE,
  incorrectDataCsv,
  localDay,
  MESSAGES,
  SUPERADMIN_PREFIX,
  validateImeiCsv,
  validateNotifyCsv,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import ExcelJS from 'exceljs';
import type { Browser, Download, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CSV_LABELS } from '../apps/web/src/features/csv/labels';
import { DEVICE_LABELS, STATE_LABELS } from '../apps/web/src/features/devices/labels';
import { AUDIT_LABELS } from '../apps/web/src/pages/Audit/labels';
import { DASHBOARD_LABELS } from '../apps/web/src/pages/Dashboard/labels';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  nextAlert,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { nextDialogs } from './support/commandFleet';
import { apiCall, apiToken, newEnrollmentSecret, randomSeed, startFleet } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

const FLEET_SIZE = 5;
/** Commands are issued through the single-command call once the server has it (the commands issue). */
const HAS_LOCK_NOTIFICATION = readFileSync(new URL('../docs/openapi.json', import.meta.url), 'utf8').includes(
  '"/api/locknotification.php"',
);
/** Valid IMEIs no device of the run has (the fleet's start with 35). */
const UNKNOWN_IMEI = '990000000000017';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
const enrollmentSecret = newEnrollmentSecret();
const seed = randomSeed();
const fleets: Fleet[] = [];
/** Every device registered so far, in registration order. */
const registered = () => fleets.flatMap((fleet) => fleet.devices);

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  fleets.push(await startFleet({ baseUrl: server.baseUrl, enrollmentSecret, devices: FLEET_SIZE, seed }));
  // Every device is online and has reported its state before a screen looks at it.
  const token = await apiToken(server.baseUrl, USERS.admin);
  const imeis = registered().map((device) => device.imei);
  await waitUntil('the fleet online with its state reported', async () => {
    const { items } = await apiCall<{ items: DeviceRecord[] }>(
      server.baseUrl,
      token,
      '/api/devicedetails.php',
      { imeis },
    );
    return items.length === FLEET_SIZE && items.every((item) => item.online && item.state !== null);
  });
});

afterAll(async () => {
  await Promise.all(fleets.map((fleet) => fleet.stop()));
  await browser?.close();
  await server?.stop();
});

const path = () => new URL(consolePage.page.url()).pathname;

/** Clicks and returns the download it starts, with its text content. */
async function download(page: Page, click: () => Promise<void>): Promise<{ name: string; file: string }> {
  const [started] = await Promise.all([page.waitForEvent('download'), click()]);
  const file = await (started as Download).path();
  return { name: (started as Download).suggestedFilename(), file };
}

async function uploadCsv(page: Page, name: string, text: string, mimeType = 'text/csv') {
  await page.locator('input[type="file"]').setInputFiles({ name, mimeType, buffer: Buffer.from(text) });
}

const csvOf = (imeis: string[]) => ['Sno,IMEI1', ...imeis.map((imei, i) => `${i + 1},${imei}`)].join('\r\n');

/** The texts of the device table's body rows, cell by cell. */
async function tableRows(page: Page, testId: string): Promise<string[][]> {
  const table = page.getByTestId(testId);
  await table.waitFor();
  return table
    .locator('tbody tr')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
}

async function headerOf(page: Page, testId: string): Promise<string[]> {
  const table = page.getByTestId(testId);
  await table.waitFor();
  return table
    .locator('thead th')
    .evaluateAll((cells) => cells.map((cell) => cell.textContent?.trim() ?? ''));
}

describe('Dashboard', () => {
  it('shows the counts of the registered fleet, and Refresh Data fetches them again', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.getByRole('heading', { name: screenTitle('home') }).waitFor();
    await page.getByText(DASHBOARD_LABELS.totalDevices, { exact: true }).waitFor();
    await page.getByText(DASHBOARD_LABELS.deenrolled, { exact: true }).waitFor();
    await page.getByText(DASHBOARD_LABELS.todaysRegistration, { exact: true }).waitFor();
    await expect(page.getByTestId('total-devices').textContent()).resolves.toBe(String(FLEET_SIZE));
    await expect(page.getByTestId('deenrolled-devices').textContent()).resolves.toBe('0');
    await expect(page.getByTestId('todays-registration').textContent()).resolves.toBe(String(FLEET_SIZE));
    await expect(page.getByTestId('devices-online').textContent()).resolves.toBe(
      `${FLEET_SIZE}/${FLEET_SIZE}`,
    );
    await page.getByRole('img', { name: DASHBOARD_LABELS.registrationsPerDay }).waitFor();

    // One more phone registers; the page shows it after Refresh Data, which asks the server again.
    fleets.push(await startFleet({ baseUrl: server.baseUrl, enrollmentSecret, devices: 1, seed: seed + 1 }));
    await expect(page.getByTestId('total-devices').textContent()).resolves.toBe(String(FLEET_SIZE));
    const refetched = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/homeData.php');
    await page.getByRole('button', { name: DASHBOARD_LABELS.refresh }).click();
    expect((await refetched).status()).toBe(200);
    await page.waitForFunction(
      (count) => document.querySelector('[data-testid="total-devices"]')?.textContent === count,
      String(FLEET_SIZE + 1),
    );
    await expect(page.getByTestId('todays-registration').textContent()).resolves.toBe(String(FLEET_SIZE + 1));
  });

  it('the SUPERADMIN home at /superadmin is the dashboard too', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.superadmin);
    expect(path()).toBe(SUPERADMIN_PREFIX);
    await page.getByTestId('total-devices').waitFor();
    await expect(page.getByTestId('total-devices').textContent()).resolves.toBe(String(registered().length));
  });

  it('downloads samplecsv.csv and notificationsamplecsv.csv', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    const sample = await download(page, () =>
      page.getByRole('link', { name: DASHBOARD_LABELS.sampleCsv }).click(),
    );
    expect(sample.name).toBe('samplecsv.csv');
    const sampleText = await readFile(sample.file, 'utf8');
    expect(sampleText.split(/\r?\n/)[0]).toBe('Sno,IMEI1');
    // The sample passes the console's own validation.
    const checked = await validateImeiCsv(sampleText);
    expect(checked.invalid).toEqual([]);
    expect(checked.valid).toHaveLength(2);

    const notification = await download(page, () =>
      page.getByRole('link', { name: DASHBOARD_LABELS.notificationSampleCsv }).click(),
    );
    expect(notification.name).toBe('notificationsamplecsv.csv');
    const lines = (await readFile(notification.file, 'utf8')).trim().split(/\r?\n/);
    expect(lines[0]).toBe('sno,name,imei1,amount,date,template');
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines.slice(1))
      expect(line).toMatch(/,\d{15},\d+(\.\d{1,2})?,\d{2}\/\d{2}\/\d{4},(Pre|Due|Post)$/);
    // Dated on the browser's day, it passes the product's own validation today, its Due row too.
    const notify = await validateNotifyCsv(lines.join('\n'), { today: localDay() });
    expect(notify.invalid).toEqual([]);
    expect(notify.valid.map((row) => row.template)).toEqual(['Pre', 'Due', 'Post']);
  });
});

describe('Device Details', () => {
  it('searches at exactly 15 characters, shows the device, its state and pending commands, and clears at 14', async () => {
    const { page } = consolePage;
    const device = registered()[0];
    if (!device) throw new Error('no device');
    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-deviceDetails').click();
    await page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
    const lookups: string[] = [];
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === '/api/devicedetails.php') lookups.push(request.url());
    });
    const input = fieldLabelled(page, DEVICE_LABELS.searchLabel);

    // Fourteen digits are not looked up. Barrier: the full IMEI typed next is looked up and shown; a lookup
    // of the fourteen digits would have gone out before it (`lookups` below holds one call only).
    await input.fill(device.imei.slice(0, 14));
    expect(await page.getByTestId('device-table').count()).toBe(0);

    await input.fill(device.imei);
    const rows = await tableRows(page, 'device-table');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.slice(0, 8)).toEqual([
      '1',
      DEVICE_LABELS.viewAudit,
      device.imei,
      device.profile.imei2 ?? '',
      'ENROLLED',
      expect.any(String),
      device.profile.appversion,
      device.profile.apptype,
    ]);
    expect(lookups).toHaveLength(1);
    await expect(page.getByTestId('device-online').textContent()).resolves.toBe(DEVICE_LABELS.online);
    await expect(page.getByTestId('state-locked').locator('td').allTextContents()).resolves.toEqual([
      'Locked',
      'No',
      'No',
      'In effect',
    ]);
    await page.getByTestId('pending-commands').getByText(DEVICE_LABELS.pendingNone).waitFor();

    await input.press('Backspace');
    await page.getByTestId('device-table').waitFor({ state: 'detached' });
    expect(await page.getByTestId('device-state').count()).toBe(0);
  });

  it("answers 'No results found' for an IMEI no device has", async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(UNKNOWN_IMEI);
    await expect(page.getByTestId('no-results').textContent()).resolves.toBe(MESSAGES.noResults);
  });

  it('refuses a file that is not a CSV', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await page.getByRole('heading', { name: screenTitle('deviceDetails') }).waitFor();
    const [message] = await Promise.all([
      nextAlert(page),
      uploadCsv(page, 'imeis.txt', csvOf([UNKNOWN_IMEI]), 'text/plain'),
    ]);
    expect(message).toBe(MESSAGES.onlyCsv);
    expect(await page.getByTestId('csv-errors').count()).toBe(0);
  });

  it('lists the bad rows of a CSV with the spec messages, and incorrect_data.csv has them', async () => {
    const { page } = consolePage;
    const [first] = registered();
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    const text = [
      'Sno,IMEI1',
      `1,${first?.imei}`,
      '2,12345',
      `3,${first?.imei},x`,
      '4,35693803564380A',
      '',
    ].join('\r\n');
    await uploadCsv(page, 'bad.csv', text);

    const errors = page.getByTestId('csv-errors');
    await errors.getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    await errors.getByRole('heading', { name: MESSAGES.invalidImeiSection }).waitFor();
    expect(await tableRows(page, 'invalid-rows')).toEqual([
      ['3', MESSAGES.invalidImeiLength, '2,12345'],
      ['4', MESSAGES.moreThanTwoColumns, `3,${first?.imei},x`],
      ['5', MESSAGES.invalidImeiLength, '4,35693803564380A'],
    ]);
    // Nothing is looked up for an invalid file.
    expect(await page.getByTestId('device-table').count()).toBe(0);

    const report = await download(page, () =>
      errors.getByRole('button', { name: CSV_LABELS.downloadIncorrect }).click(),
    );
    expect(report.name).toBe(ERROR_REPORT_FILE_NAME);
    const file = await readFile(report.file, 'utf8');
    // Every CSV download starts with the UTF-8 BOM, so Excel reads it as UTF-8.
    expect(file.startsWith('\uFEFF')).toBe(true);
    const written = file.slice(1);
    expect(written.split('\r\n')).toEqual([
      'Sno,Incorrect Data,Error Message',
      `3,"2,12345","${MESSAGES.invalidImeiLength}"`,
      `4,"3,${first?.imei},x",${MESSAGES.moreThanTwoColumns}`,
      `5,"4,35693803564380A","${MESSAGES.invalidImeiLength}"`,
    ]);
    expect(written).toBe(await incorrectDataCsv((await validateImeiCsv(text)).invalid));
  });

  it('a header-only CSV passes with its note and looks nothing up', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await uploadCsv(page, 'empty.csv', 'Sno,IMEI1\r\n');
    await expect(page.getByTestId('csv-note').textContent()).resolves.toBe(IMEI_CSV_NO_DATA_NOTE);
    expect(await page.getByTestId('csv-errors').count()).toBe(0);
    expect(await page.getByTestId('device-table').count()).toBe(0);
  });

  it('a valid CSV shows its devices in file order, and View Audit opens the audit report on one', async () => {
    const { page } = consolePage;
    const devices = registered().slice(0, FLEET_SIZE);
    const order = [devices[3], devices[0], devices[4], devices[1], devices[2]].map((d) => d?.imei ?? '');
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await uploadCsv(page, 'fleet.csv', csvOf([order[0] ?? '', UNKNOWN_IMEI, ...order.slice(1)]));

    await page.getByTestId('csv-facts').getByText('fleet.csv', { exact: false }).waitFor();
    const rows = await tableRows(page, 'device-table');
    expect(rows.map((row) => row[0])).toEqual(['1', '2', '3', '4', '5']);
    expect(rows.map((row) => row[2])).toEqual(order);
    expect(await headerOf(page, 'device-table')).toEqual([
      'S.No.',
      'Action',
      'IMEI 1',
      'IMEI 2',
      'Enrollment Status',
      'Registration Status',
      'App Version',
      'App Type',
      'Last Command',
      'Created At',
    ]);

    const target = order[2] ?? '';
    await page
      .getByTestId('device-table')
      .locator('tbody tr')
      .nth(2)
      .getByRole('button', { name: DEVICE_LABELS.viewAudit })
      .click();
    await page.waitForURL((url) => url.pathname === '/auditReport');
    await page.getByRole('heading', { name: screenTitle('auditReport') }).waitFor();
    await expect(page.evaluate(() => localStorage.getItem('auditImei'))).resolves.toBe(target);
    await expect(fieldLabelled(page, AUDIT_LABELS.imei).inputValue()).resolves.toBe(target);
    await page.getByTestId('audit-registration').getByRole('cell', { name: target, exact: true }).waitFor();
  });

  it("a CSV of IMEIs no device has says 'No valid device data found for uploaded IMEIs.'", async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await uploadCsv(page, 'unknown.csv', csvOf([UNKNOWN_IMEI, '990000000000025']));
    await expect(page.getByTestId('no-results').textContent()).resolves.toBe(MESSAGES.noValidDeviceData);
  });
});

describe('Audit Report By IMEI', () => {
  it('the search button alerts at 14 digits; an unknown IMEI shows the spec empty text', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.goto('/auditReport');
    await page.getByRole('heading', { name: screenTitle('auditReport') }).waitFor();
    const input = fieldLabelled(page, AUDIT_LABELS.imei);
    await input.fill(UNKNOWN_IMEI.slice(0, 14));
    const [message] = await Promise.all([
      nextAlert(page),
      page.getByRole('button', { name: AUDIT_LABELS.search, exact: true }).click(),
    ]);
    expect(message).toBe(MESSAGES.auditImeiLength);

    await input.fill(UNKNOWN_IMEI);
    await page.getByText(MESSAGES.auditEmpty, { exact: true }).waitFor();
    expect(await page.getByRole('button', { name: AUDIT_LABELS.download }).isDisabled()).toBe(true);

    await input.fill(UNKNOWN_IMEI.slice(0, 14));
    await page.getByText(MESSAGES.auditEmpty, { exact: true }).waitFor({ state: 'detached' });
  });

  it('shows the registration, prints only the report, and downloads AuditReport_{brand}_imei-{imei}.xlsx', async () => {
    const { page } = consolePage;
    const device = registered()[1];
    if (!device) throw new Error('no device');
    await signIn(page, codec, USERS.admin);
    await page.goto('/auditReport');
    await fieldLabelled(page, AUDIT_LABELS.imei).fill(device.imei);

    const registration = page.getByTestId('audit-registration');
    await registration.getByRole('cell', { name: device.imei, exact: true }).waitFor();
    await registration.getByRole('cell', { name: device.profile.brand, exact: true }).waitFor();
    await page.getByTestId('audit-release').getByText(AUDIT_LABELS.noRecords).waitFor();
    await page.getByTestId('audit-deenroll').getByText(AUDIT_LABELS.noRecords).waitFor();
    await page.getByTestId('audit-commands').getByText(AUDIT_LABELS.noRecords).waitFor();

    // Print Report prints the page; the print layout hides the shell and the controls.
    await page.evaluate(() => {
      const counter = window as unknown as { printed: number };
      counter.printed = 0;
      window.print = () => {
        counter.printed++;
      };
    });
    await page.getByRole('button', { name: AUDIT_LABELS.print }).click();
    await expect(page.evaluate(() => (window as unknown as { printed: number }).printed)).resolves.toBe(1);
    await page.emulateMedia({ media: 'print' });
    expect(await page.getByTestId('sidebar').isVisible()).toBe(false);
    expect(await page.getByTestId('expiry-notice').isVisible()).toBe(false);
    expect(await page.getByRole('button', { name: AUDIT_LABELS.download }).isVisible()).toBe(false);
    expect(await registration.isVisible()).toBe(true);
    await page.emulateMedia({ media: 'screen' });
    expect(await page.getByTestId('sidebar').isVisible()).toBe(true);

    const report = await download(page, () =>
      page.getByRole('button', { name: AUDIT_LABELS.download }).click(),
    );
    expect(report.name).toBe(`AuditReport_${device.profile.brand}_imei-${device.imei}.xlsx`);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(report.file);
    expect(workbook.worksheets.map((sheet) => sheet.name)).toEqual([
      'Registration Details',
      'Released Details',
      'De-enroll & Re-registration',
      'Executed Commands',
    ]);
    const values = (sheet: string, row: number) =>
      ((workbook.getWorksheet(sheet)?.getRow(row).values ?? []) as unknown[]).slice(1);
    expect(values('Registration Details', 1)).toEqual([
      'IMEI 1',
      'IMEI 2',
      'Match Status',
      'Registration Status',
      'Date and Time',
      'Manufacturer',
      'Brand',
      'Model',
      'Last Command',
    ]);
    const [imei1, imei2, , , , manufacturer, brand, model] = values('Registration Details', 2);
    expect([imei1, imei2, manufacturer, brand, model]).toEqual([
      device.imei,
      device.profile.imei2,
      device.profile.manufacturer,
      device.profile.brand,
      device.profile.model,
    ]);
    expect(workbook.getWorksheet('Registration Details')?.rowCount).toBe(2);
    expect(values('Executed Commands', 1)).toEqual([
      'S.No.',
      'Date and Time',
      'IMEI 1',
      'Transaction Id',
      'Interface',
      'Command',
      'Command Type',
      'Status',
      'User',
      'Created At',
    ]);
    expect(workbook.getWorksheet('Executed Commands')?.rowCount).toBe(1);
  });
});

describe('Device Version Detail', () => {
  it('lists each app version with its number of devices', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-appversion').click();
    await page.getByRole('heading', { name: screenTitle('appversion') }).waitFor();
    const counts = new Map<string, number>();
    for (const device of registered()) {
      counts.set(device.profile.appversion, (counts.get(device.profile.appversion) ?? 0) + 1);
    }
    const expected = [...counts.entries()]
      .sort(([a], [b]) => (a < b ? 1 : -1))
      .map(([version, count], index) => [String(index + 1), version, String(count)]);
    expect(await headerOf(page, 'app-versions')).toEqual(['S.No.', 'App Version', 'No. of Device']);
    expect(await tableRows(page, 'app-versions')).toEqual(expected);
  });
});

describe('Last Command Reports', () => {
  it('a SUPERADMIN uploads a CSV of IMEIs, sees the spec columns, and View Audit stays under /superadmin/', async () => {
    const { page } = consolePage;
    const [a, b] = registered();
    await signIn(page, codec, USERS.superadmin);
    await page.getByTestId('nav-lastCommand').click();
    await page.getByRole('heading', { name: screenTitle('lastCommand') }).waitFor();
    expect(path()).toBe(`${SUPERADMIN_PREFIX}/lastCommand`);

    await uploadCsv(page, 'last.csv', csvOf([b?.imei ?? '', a?.imei ?? '']));
    expect(await headerOf(page, 'device-table')).toEqual([
      'S.No.',
      'Action',
      'IMEI 1',
      'IMEI 2',
      'Enrollment Status',
      'Registration Status',
      'App Version',
      'App Type',
      'Last Command',
      'Created At',
    ]);
    const rows = await tableRows(page, 'device-table');
    expect(rows.map((row) => [row[0], row[2], row[3], row[8]])).toEqual([
      ['1', b?.imei, b?.profile.imei2, ''],
      ['2', a?.imei, a?.profile.imei2, ''],
    ]);
    for (const row of rows) expect(row[9]).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);

    await page
      .getByTestId('device-table')
      .locator('tbody tr')
      .first()
      .getByRole('button', { name: DEVICE_LABELS.viewAudit })
      .click();
    await page.waitForURL((url) => url.pathname === `${SUPERADMIN_PREFIX}/auditReport`);
    await page.getByRole('heading', { name: screenTitle('auditReport') }).waitFor();
    await expect(fieldLabelled(page, AUDIT_LABELS.imei).inputValue()).resolves.toBe(b?.imei);
  });

  it("says 'No valid device data found for uploaded IMEIs.' and lists a bad file's errors", async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.superadmin);
    await page.goto(`${SUPERADMIN_PREFIX}/lastCommand`);
    await page.getByRole('heading', { name: screenTitle('lastCommand') }).waitFor();
    await uploadCsv(page, 'none.csv', csvOf([UNKNOWN_IMEI]));
    await expect(page.getByTestId('no-results').textContent()).resolves.toBe(MESSAGES.noValidDeviceData);

    await uploadCsv(page, 'headers.csv', 'Serial,IMEI\r\n1,356938035643809\r\n');
    await page.getByTestId('csv-errors').getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    expect(await tableRows(page, 'invalid-rows')).toEqual([['1', 'Invalid Headers', 'headers not matched']]);
    expect(await page.getByTestId('no-results').count()).toBe(0);
  });
});

describe.runIf(HAS_LOCK_NOTIFICATION)('with commands the devices acknowledge', () => {
  interface AuditCommands {
    commands: { transactionId: string; command: string; status: string }[];
  }

  async function issue(imei: string, action: string): Promise<string> {
    const token = await apiToken(server.baseUrl, USERS.admin);
    const answer = await apiCall<{ transactionId: string }>(
      server.baseUrl,
      token,
      '/api/locknotification.php',
      {
        imei,
        action,
        user: USERS.admin.email,
      },
    );
    return answer.transactionId;
  }

  async function commandStatus(imei: string, transactionId: string): Promise<string | undefined> {
    const token = await apiToken(server.baseUrl, USERS.admin);
    const audit = await apiCall<AuditCommands>(server.baseUrl, token, '/api/auditReportByImei.php', {
      imei1: imei,
    });
    return audit.commands.find((c) => c.transactionId === transactionId)?.status;
  }

  async function waitOnline(imei: string, online: boolean) {
    const token = await apiToken(server.baseUrl, USERS.admin);
    await waitUntil(`${imei} ${online ? 'online' : 'offline'}`, async () => {
      const { items } = await apiCall<{ items: DeviceRecord[] }>(
        server.baseUrl,
        token,
        '/api/devicedetails.php',
        {
          imei,
        },
      );
      return items[0]?.online === online;
    });
  }

  it("the audit report follows a command's live status to the device's acknowledgement; Device Details shows the state", async () => {
    const { page } = consolePage;
    const device = registered()[2];
    if (!device) throw new Error('no device');
    const lock = await issue(device.imei, 'lock');
    await waitUntil('lock executed', async () => (await commandStatus(device.imei, lock)) === 'EXECUTED');

    // The device is away when unlock is sent: the report shows it pending, then executed once the device
    // is back and acknowledges, without anyone searching again.
    await device.dropOffline();
    await waitOnline(device.imei, false);
    const unlock = await issue(device.imei, 'unlock');
    await signIn(page, codec, USERS.admin);
    await page.goto('/auditReport');
    await fieldLabelled(page, AUDIT_LABELS.imei).fill(device.imei);
    const commands = page.getByTestId('audit-commands');
    const unlockRow = commands.locator('tbody tr').filter({ hasText: unlock });
    const lockRow = commands.locator('tbody tr').filter({ hasText: lock });
    await unlockRow.getByText('QUEUED', { exact: true }).waitFor();
    await lockRow.getByText('EXECUTED', { exact: true }).waitFor();
    expect(await lockRow.getByRole('cell', { name: 'LOCK', exact: true }).count()).toBe(1);

    await device.connect();
    await unlockRow.getByText('EXECUTED', { exact: true }).waitFor({ timeout: 20_000 });
    expect(await unlockRow.getByRole('cell', { name: 'UNLOCK', exact: true }).count()).toBe(1);

    await page.goto('/deviceDetails');
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(device.imei);
    await page.getByTestId('device-state').waitFor();
    await expect(page.getByTestId('state-locked').locator('td').allTextContents()).resolves.toEqual([
      'Locked',
      'No',
      'No',
      'In effect',
    ]);
    const rows = await tableRows(page, 'device-table');
    expect(rows[0]?.[8]).toBe('UNLOCK');
  });

  it('a pending command of an offline device is listed on Device Details and cancelled; it never reaches the device', async () => {
    const { page } = consolePage;
    const device = registered()[3];
    if (!device) throw new Error('no device');
    await device.dropOffline();
    await waitOnline(device.imei, false);
    const block = await issue(device.imei, 'blockapp');

    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(device.imei);
    const panel = page.getByTestId('pending-commands');
    const row = panel.locator('tbody tr').filter({ hasText: 'BLOCKAPP' });
    await row.getByText('QUEUED', { exact: true }).waitFor();
    await expect(page.getByTestId('device-online').textContent()).resolves.toBe(DEVICE_LABELS.offline);
    await expect(page.getByTestId('state-appsBlocked').locator('td').allTextContents()).resolves.toEqual([
      STATE_LABELS.appsBlocked,
      'Yes',
      'No',
      DEVICE_LABELS.statePending,
    ]);

    // The console asks first, naming the command and the IMEI; a declined confirmation sends nothing.
    const question = DEVICE_LABELS.confirmCancel('BLOCKAPP', device.imei);
    const declined = nextDialogs(page, 1, 'dismiss');
    await row.getByRole('button', { name: DEVICE_LABELS.cancel }).click();
    expect(await declined).toEqual([{ type: 'confirm', message: question }]);
    await expect(commandStatus(device.imei, block)).resolves.toBe('QUEUED');
    await row.getByText('QUEUED', { exact: true }).waitFor();

    const accepted = nextDialogs(page, 2);
    await row.getByRole('button', { name: DEVICE_LABELS.cancel }).click();
    expect(await accepted).toEqual([
      { type: 'confirm', message: question },
      { type: 'alert', message: 'Command cancelled' },
    ]);
    await panel.getByText(DEVICE_LABELS.pendingNone).waitFor();
    await expect(commandStatus(device.imei, block)).resolves.toBe('CANCELLED');

    await device.connect();
    await waitOnline(device.imei, true);
    // Barrier: a later command reaches the device, so one still due before it would have arrived first.
    const later = await issue(device.imei, 'unlock');
    await waitUntil('the later command to reach the device', () =>
      device.received.some((m) => m.id === later),
    );
    expect(device.received.map((m) => m.id)).not.toContain(block);
    expect(device.state.appsBlocked).toBe(false);
  });

  it('a de-enrolled device has nothing pending on Device Details: its lock is shown re-applied on registering again', async () => {
    const { page } = consolePage;
    const device = registered()[4];
    if (!device) throw new Error('no device');
    await device.dropOffline();
    await waitOnline(device.imei, false);
    const lock = await issue(device.imei, 'lock');
    const token = await apiToken(server.baseUrl, USERS.admin);
    await apiCall(server.baseUrl, token, '/api/formattedDevice.php', {
      imei: device.imei,
      action: 'formatteddevice',
    });
    await expect(commandStatus(device.imei, lock)).resolves.toBe('CANCELLED');

    await signIn(page, codec, USERS.admin);
    await page.goto('/deviceDetails');
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(device.imei);
    const state = page.getByTestId('device-state');
    await state.waitFor();
    await expect(page.getByTestId('device-state-note').textContent()).resolves.toBe(
      `${MESSAGES.commandDeenrolled} ${DEVICE_LABELS.stateDeenrolled}`,
    );
    await expect(state.locator('thead th').allTextContents()).resolves.toEqual([
      DEVICE_LABELS.stateSetting,
      DEVICE_LABELS.stateDesired,
      DEVICE_LABELS.stateLastReported,
      '',
    ]);
    await expect(page.getByTestId('state-locked').locator('td').allTextContents()).resolves.toEqual([
      STATE_LABELS.locked,
      'Yes',
      'No',
      DEVICE_LABELS.stateOnRegistration,
    ]);
    expect(await state.getByText(DEVICE_LABELS.statePending, { exact: true }).count()).toBe(0);
    expect(await state.getByText(DEVICE_LABELS.stateInSync, { exact: true }).count()).toBe(0);
    await page.getByTestId('pending-commands').getByText(DEVICE_LABELS.pendingNone).waitFor();
  });
});
