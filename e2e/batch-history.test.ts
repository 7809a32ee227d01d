/**
 * Not found says why, and batch results can be found again, in a real browser against a real server and
 * simulated devices:
 * - a single command to a released, de-enrolled or unknown IMEI alerts why; a retailer's user hears the
 *   plain 'not found' for another retailer's device and an unknown IMEI alike;
 * - a batch's results table and imei_data.csv carry the reason beside 'not found';
 * - after its page is closed, the batch is found on the Batches screen, its results filtered (not found,
 *   a reason) and downloaded (streamed by the server, UTF-8 BOM, Reason column);
 * - an ADMIN sees a USER's batch there; a USER without a batch screen is not let in;
 * - the Device Details batch lists the IMEIs it did not find, with their reason.
 */
import { BATCH_NOT_FOUND_REASONS, MESSAGES, parseCsvRows } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { Fleet, profileFor, rng, SimulatedDevice } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BATCH_LABELS } from '../apps/web/src/features/batch/labels';
import { IMEI_RESULTS_COLUMNS, IMEI_RESULTS_FILE_NAME } from '../apps/web/src/features/batch/resultsCsv';
import { COMMAND_LABELS } from '../apps/web/src/features/commands/labels';
import { DEVICE_LABELS } from '../apps/web/src/features/devices/labels';
import { BATCHES_LABELS } from '../apps/web/src/pages/Batches/labels';
import { chooseFile, downloadOf, imeiCsv, renderedRows, unknownImeis } from './support/batches';
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
  nextDialogs,
  type RetailerTestUser,
  templateWithUsers,
} from './support/commandFleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

const ENROLLMENT_SECRET = 'e2e-batch-history-enrollment-sec';
const RETAILER: RetailerTestUser = {
  email: 'history.retailer@lendlock.com',
  phone: '9000000040',
  level: 'USER',
  permissions: ['lockDevice', 'deviceDetails'],
  retailerPhone: '9812345671',
};
const [NOT_REGISTERED, RELEASED, DEENROLLED] = BATCH_NOT_FOUND_REASONS;

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let template: { dir: string; dispose(): void };
let fleet: Fleet;
/** Another retailer's device (registered, never connected). */
let theirs: SimulatedDevice;
let adminApi: ApiSession;
/** The fleet: one to lock, one released, one de-enrolled, one spare. */
let found: string;
let released: string;
let deenrolled: string;
const [unknown, unknownToo] = unknownImeis(2, 17_300) as [string, string];
const consoles: ConsolePage[] = [];

async function signedIn(user: Parameters<typeof signIn>[2]): Promise<ConsolePage> {
  const consolePage = await openConsole(browser, server.baseUrl);
  consoles.push(consolePage);
  await signIn(consolePage.page, codec, user);
  return consolePage;
}

async function open(page: Page, name: string, search = '') {
  await page.goto(`/${name}${search}`);
  await page.getByRole('heading', { name: screenTitle(name), exact: true }).waitFor();
}

async function csvRows(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await parseCsvRows(text, (chunk) => rows.push(...chunk.map((row) => [...row])));
  return rows;
}

/** Sends a single lock for `imei` from the Lock Device screen and returns what the console alerted. */
async function singleLock(page: Page, imei: string): Promise<string> {
  await open(page, 'lockDevice');
  await fieldLabelled(page, COMMAND_LABELS.imei).fill(imei);
  const dialogs = nextDialogs(page, 1);
  await page.getByRole('button', { name: COMMAND_LABELS.submit, exact: true }).click();
  const [alert] = await dialogs;
  expect(alert?.type).toBe('alert');
  return alert?.message ?? '';
}

beforeAll(async () => {
  template = await templateWithUsers(inject('templateDataDir'), [RETAILER]);
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: template.dir, env: () => ({ ENROLLMENT_SECRET }) }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  const options = { server: server.baseUrl, enrollmentSecret: ENROLLMENT_SECRET };
  fleet = new Fleet({ ...options, devices: 4, seed: 100 + Math.floor(Math.random() * 800) });
  theirs = new SimulatedDevice({ ...profileFor(61, 0, rng(61)), retailer_phone: '9812345679' }, options);
  await Promise.all([fleet.start(), theirs.register()]);
  [found, released, deenrolled] = fleet.devices.map((d) => d.imei) as [string, string, string];
  adminApi = await apiSession(server.baseUrl, USERS.admin.email);
  const release = await adminApi.post('locknotification.php', { imei: released, action: 'release' });
  expect(release.status).toBe(200);
  const releasing = fleet.devices[1] as SimulatedDevice;
  await waitUntil('the release to execute', () =>
    releasing.executions.has(String(release.body.transactionId)),
  );
  const formatted = await adminApi.post('formattedDevice.php', {
    imei: deenrolled,
    action: 'formatteddevice',
  });
  expect(formatted.status).toBe(200);
}, 180_000);

afterAll(async () => {
  for (const consolePage of consoles) {
    // Every page ran without an uncaught error or a blocked style or script.
    expect(consolePage.pageErrors).toEqual([]);
    expect(await consolePage.cspViolations()).toEqual([]);
    await consolePage.close();
  }
  await fleet?.stop();
  await browser?.close();
  await server?.stop();
  template?.dispose();
}, 180_000);

describe('a single command says why it is refused', () => {
  it('released, de-enrolled and unknown IMEIs each alert their own message', async () => {
    const { page } = await signedIn(USERS.admin);
    expect(await singleLock(page, released)).toBe(MESSAGES.commandReleased);
    expect(await singleLock(page, deenrolled)).toBe(MESSAGES.commandDeenrolled);
    expect(await singleLock(page, unknown)).toBe(MESSAGES.commandNotRegistered);
  });

  it("a retailer's user hears the plain 'not found' for another retailer's device, as for an unknown IMEI", async () => {
    const { page } = await signedIn(RETAILER);
    expect(await singleLock(page, theirs.imei)).toBe(MESSAGES.commandNotFound);
    expect(await singleLock(page, unknown)).toBe(MESSAGES.commandNotFound);
  });
});

describe('a batch found again on the Batches screen', () => {
  let batchId: number;

  it('the results table shows the reason beside not found, and the batch survives its page being closed', async () => {
    const consolePage = await signedIn(USERS.locker);
    const { page } = consolePage;
    await open(page, 'lockDevice');
    const panel = page.getByTestId('batch-panel');
    await panel.getByRole('heading', { name: BATCH_LABELS.title }).waitFor();
    const reply = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/bulkLockCopy.php');
    await chooseFile(panel, 'history.csv', imeiCsv([found, unknown, released, deenrolled]));
    batchId = ((await (await reply).json()) as { batchId: number }).batchId;
    const outcome = panel.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 30_000 });
    const table = outcome.getByTestId('batch-results');
    await table.locator('tbody tr[data-index]').first().waitFor();
    expect(await renderedRows(table)).toEqual([
      ['1', found, 'found', ''],
      ['2', unknown, 'not found', NOT_REGISTERED],
      ['3', released, 'not found', RELEASED],
      ['4', deenrolled, 'not found', DEENROLLED],
    ]);

    // The tab goes; a new one of the same browser (still signed in) finds the batch on the Batches screen.
    await page.close();
    const again = await consolePage.context.newPage();
    await again.goto('/');
    await again.getByTestId('nav-batches').click();
    await again.getByRole('heading', { name: screenTitle('batches'), exact: true }).waitFor();
    const list = again.getByTestId('batch-list');
    await list.locator('tbody tr[data-index]').first().waitFor();
    const row = (await renderedRows(list)).find((cells) => cells[0] === String(batchId));
    expect(row?.slice(0, 9)).toEqual([
      String(batchId),
      'Lock',
      'history.csv',
      USERS.locker.email,
      '4',
      '1',
      '3',
      '4',
      BATCHES_LABELS.phases.complete,
    ]);
    expect(row?.[9]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(row?.[11]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    await again.getByRole('link', { name: BATCHES_LABELS.openBatch(batchId) }).click();
    await again.waitForURL((url) => url.searchParams.get('batch') === String(batchId));
    const detail = again.getByTestId('batch-detail');
    await detail.getByRole('heading', { name: BATCHES_LABELS.detailTitle(batchId) }).waitFor();
    const results = detail.getByTestId('batch-results');
    const filter = detail.getByTestId('results-filter');
    await detail.getByText(BATCH_LABELS.shownOf(4, 4), { exact: true }).waitFor();
    await filter.selectOption({ label: BATCH_LABELS.filterNotFound });
    await detail.getByText(BATCH_LABELS.shownOf(3, 3), { exact: true }).waitFor();
    expect((await renderedRows(results)).map((cells) => [cells[0], cells[3]])).toEqual([
      ['2', NOT_REGISTERED],
      ['3', RELEASED],
      ['4', DEENROLLED],
    ]);

    await filter.selectOption({ label: BATCH_LABELS.filterReason(RELEASED) });
    await detail.getByText(BATCH_LABELS.shownOf(1, 1), { exact: true }).waitFor();
    expect(await renderedRows(results)).toEqual([['3', released, 'not found', RELEASED]]);

    // The download is the server's stream of the same selection: imei_data.csv, BOM, Reason column.
    const exports: string[] = [];
    again.on('request', (request) => {
      const url = new URL(request.url());
      if (url.pathname === '/api/v2/batch/export') exports.push(url.search);
    });
    const file = await downloadOf(again, () =>
      detail.getByRole('button', { name: BATCH_LABELS.downloadCsv, exact: true }).click(),
    );
    expect(exports).toEqual([`?batchId=${batchId}&filter=notFound&reason=released`]);
    expect(file.name).toBe(IMEI_RESULTS_FILE_NAME);
    expect(file.bom).toBe(true);
    expect(await csvRows(file.text)).toEqual([
      [...IMEI_RESULTS_COLUMNS],
      ['3', released, 'not found', RELEASED],
    ]);

    await filter.selectOption({ label: BATCH_LABELS.filterAll });
    const whole = await downloadOf(again, () =>
      detail.getByRole('button', { name: BATCH_LABELS.downloadCsv, exact: true }).click(),
    );
    expect(await csvRows(whole.text)).toEqual([
      [...IMEI_RESULTS_COLUMNS],
      ['1', found, 'found', ''],
      ['2', unknown, 'not found', NOT_REGISTERED],
      ['3', released, 'not found', RELEASED],
      ['4', deenrolled, 'not found', DEENROLLED],
    ]);
    await again.close();
  });

  it("an ADMIN finds the USER's batch; a USER without a batch screen is not let in", async () => {
    const { page } = await signedIn(USERS.admin);
    await open(page, 'batches');
    const list = page.getByTestId('batch-list');
    await list.getByRole('cell', { name: 'history.csv', exact: true }).waitFor();
    const owners = (await renderedRows(list))
      .filter((cells) => cells[0] === String(batchId))
      .map((c) => c[3]);
    expect(owners).toEqual([USERS.locker.email]);

    const viewer = await signedIn(USERS.viewer);
    await viewer.page.goto('/batches');
    await viewer.page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
    await expect(viewer.page.getByTestId('batch-list').count()).resolves.toBe(0);
  });
});

describe('the Device Details batch lists what it did not find', () => {
  it('beside the devices found, each IMEI not found with its reason', async () => {
    const { page } = await signedIn(USERS.admin);
    await open(page, 'deviceDetails');
    await page.locator('input[type="file"]').setInputFiles({
      name: 'lookup.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(imeiCsv([found, unknown, unknownToo])),
    });
    await page.getByTestId('device-table').waitFor();
    const missing = page.getByTestId('imeis-not-found');
    await missing.getByRole('heading', { name: DEVICE_LABELS.notFoundTitle(2) }).waitFor();
    await missing.locator('tbody tr[data-index]').first().waitFor();
    expect(await renderedRows(missing.getByTestId('not-found-rows'))).toEqual([
      ['1', unknown, NOT_REGISTERED],
      ['2', unknownToo, NOT_REGISTERED],
    ]);
  });

  it("a retailer's user sees another retailer's device as not registered, like an unknown IMEI", async () => {
    const { page } = await signedIn(RETAILER);
    await open(page, 'deviceDetails');
    await page.locator('input[type="file"]').setInputFiles({
      name: 'lookup.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(imeiCsv([theirs.imei, unknown])),
    });
    await expect(page.getByTestId('no-results').textContent()).resolves.toBe(MESSAGES.noValidDeviceData);
    await page.getByTestId('not-found-rows').locator('tbody tr[data-index]').first().waitFor();
    expect(await renderedRows(page.getByTestId('not-found-rows'))).toEqual([
      ['1', theirs.imei, NOT_REGISTERED],
      ['2', unknown, NOT_REGISTERED],
    ]);
  });
});
