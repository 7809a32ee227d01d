/**
 * The batch part of the command screens in a real browser against a real server and simulated devices
 * (batches run on the server): validation in the browser with every
 * message and incorrect_data.csv, the upload and its live progress, the summary, results and downloads,
 * Notify's File Preview, the graded batch's grade, Pause and the resume card (Process exactly once, Cancel,
 * New Batch, Set Wallpaper's _processed list), a 100,000-row batch end to end and a 1,000,000-row file
 * validated while the page stays responsive. One server, one fleet and one ADMIN sign-in for the file.
 */
import {
  ERROR_REPORT_FILE_NAME,
  incorrectDataCsv,
  MESSAGES,
  notifyMessage,
  parseCsvRows,
  validateImeiCsv,
} from '@lendlock/contract';
import type { Fleet, SimulatedDevice } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BATCH_LABELS } from '../apps/web/src/features/batch/labels';
import {
  IMEI_RESULTS_COLUMNS,
  IMEI_RESULTS_FILE_NAME,
  NOTIFY_RESULTS_COLUMNS,
} from '../apps/web/src/features/batch/resultsCsv';
import { CSV_LABELS } from '../apps/web/src/features/csv/labels';
import {
  batchApi,
  chooseFile,
  downloadOf,
  imeiCsv,
  type NotifyCsvRow,
  notifyCsv,
  renderedRows,
  unknownImeis,
} from './support/batches';
import {
  type ConsolePage,
  launchBrowser,
  nextAlert,
  openConsole,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';

import { apiCall, apiToken, newEnrollmentSecret, randomSeed, startFleet } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { labelled } from './support/ui';
import { USERS } from './support/users';

const enrollmentSecret = newEnrollmentSecret();
/** The reason the server gives a batch it paused because its owner's account was disabled. */
const OWNER_DISABLED = "Paused: the owner's account was disabled.";

let server: RunningServer;
let browser: Browser;
let fleet: Fleet;
let consolePage: ConsolePage;
let page: Page;
let api: ReturnType<typeof batchApi>;
let codec: Awaited<ReturnType<typeof serverCodec>>['codec'];

/** The fleet's devices, each test taking its own so no command of another test is counted. */
const devices = (from: number, count: number): SimulatedDevice[] => fleet.devices.slice(from, from + count);

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  fleet = await startFleet({ baseUrl: server.baseUrl, enrollmentSecret, devices: 14, seed: randomSeed() });
  api = batchApi(server.baseUrl, await apiToken(server.baseUrl, USERS.admin), USERS.admin.email);
  consolePage = await openConsole(browser, server.baseUrl);
  page = consolePage.page;
  await signIn(page, codec, USERS.admin);
});

afterAll(async () => {
  if (consolePage) {
    // Every page ran without an uncaught error or a blocked script, style or worker.
    expect(consolePage.pageErrors).toEqual([]);
    expect(await consolePage.cspViolations()).toEqual([]);
  }
  await fleet?.stop();
  await browser?.close();
  await server?.stop();
});

const panel = () => page.getByTestId('batch-panel');
const resumeCard = () => page.getByTestId('resume-card');
/**
 * An element's height in CSS px, to the hundredth: the box's float coordinates carry noise far below a
 * pixel (300 px measured as 300.0000153), which is not an overflow.
 */
const heightOf = async (locator: { boundingBox(): Promise<{ height: number } | null> }) =>
  Math.round(((await locator.boundingBox())?.height ?? Number.POSITIVE_INFINITY) * 100) / 100;
const button = (scope: Locator, name: string) => scope.getByRole('button', { name, exact: true });

/** Opens a command screen by URL and waits for its batch panel to have checked for an incomplete batch. */
async function open(name: string): Promise<Locator> {
  await page.goto(`/${name}`);
  await page.getByRole('heading', { name: screenTitle(name), exact: true }).waitFor();
  await panel().getByRole('heading', { name: BATCH_LABELS.title }).waitFor();
  return panel();
}

/** The next bulk upload the page sends to `script`: the request and the server's plain-JSON answer. */
async function nextUpload(script: string) {
  const response = await page.waitForResponse((r) => new URL(r.url()).pathname === `/api/${script}`);
  return {
    status: response.status(),
    body: (await response.json()) as { status: string; batchId: number; total: number; message: string },
  };
}

/** Counts the requests to `/api/<script>` from now on. */
function countCalls(script: string): { readonly count: number } {
  const counter = { count: 0 };
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === `/api/${script}`) counter.count++;
  });
  return counter;
}

/** The summary the panel shows for a finished batch. */
async function summary(scope: Locator) {
  const read = async (key: string) => Number(await scope.getByTestId(`summary-${key}`).textContent());
  return {
    total: await read('total'),
    valid: await read('valid'),
    invalid: await read('invalid'),
    found: await read('found'),
    notFound: await read('notFound'),
  };
}

async function csvRows(text: string): Promise<string[][]> {
  const rows: string[][] = [];
  await parseCsvRows(text, (chunk) => rows.push(...chunk.map((row) => [...row])));
  return rows.filter((row) => !(row.length === 1 && row[0] === ''));
}

/** Waits until a stopped batch's progress no longer moves (a chunk in flight at Pause has committed). */
async function settled(batchId: number) {
  let previous = await api.progress(batchId);
  await waitUntil('the stopped batch to settle', async () => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    const now = await api.progress(batchId);
    const still = now.processed === previous.processed && now.phase !== 'running';
    previous = now;
    return still;
  });
  return previous;
}

/** Resolves once the server has processed some rows of the batch. */
const someProcessed = (batchId: number) =>
  waitUntil('some rows to be processed', async () => (await api.progress(batchId)).processed > 0);

/** Results of the whole batch, each row exactly once, every one decided, in file order. */
async function expectProcessedOnce(batchId: number, imeis: readonly string[]) {
  const results = await api.results(batchId);
  expect(results.map((r) => r.sno)).toEqual(imeis.map((_, i) => i + 1));
  expect(results.map((r) => r.imei)).toEqual(imeis);
  expect(results.every((r) => r.validate !== null)).toBe(true);
  return results;
}

describe('an IMEI batch', () => {
  it('locks the devices of the file: file facts, summary, results table, imei_data.csv, and the devices obey', async () => {
    const fleetPart = devices(0, 4);
    const unknown = unknownImeis(3, 1);
    const [a, b, c, d] = fleetPart.map((device) => device.imei) as [string, string, string, string];
    const imeis = [a, unknown[0], b, c, unknown[1], d, unknown[2]] as string[];
    const scope = await open('lockDevice');

    const upload = nextUpload('bulkLockCopy.php');
    await chooseFile(scope, 'devices.csv', imeiCsv(imeis));
    const { status, body } = await upload;
    expect(status).toBe(200);
    expect(body).toMatchObject({ status: 'success', total: imeis.length });

    const outcome = scope.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 30_000 });
    const server = await api.progress(body.batchId);
    expect(server).toMatchObject({ phase: 'complete', isComplete: 'complete', processed: imeis.length });
    // The file's name, size in KB and read time in ms; the processing time in ms.
    await expect(scope.getByTestId('csv-facts').textContent()).resolves.toMatch(
      new RegExp(
        `^${CSV_LABELS.fileName}: devices\\.csv · ${CSV_LABELS.fileSize}: 0\\.\\d\\d KB · ${CSV_LABELS.readTime}: \\d+ ms$`,
      ),
    );
    await expect(outcome.getByTestId('processing-time').textContent()).resolves.toBe(
      `${BATCH_LABELS.processingTime}: ${server.elapsedMs} ms`,
    );
    expect(await summary(outcome)).toEqual({ total: 7, valid: 7, invalid: 0, found: 4, notFound: 3 });

    const validate = (imei: string) => (unknown.includes(imei) ? 'not found' : 'found');
    // A not found row says why beside it (no device is registered with an unknown IMEI).
    const reason = (imei: string) => (unknown.includes(imei) ? 'not registered' : '');
    const expected = imeis.map((imei, i) => [String(i + 1), imei, validate(imei), reason(imei)]);
    const table = outcome.getByTestId('batch-results');
    await table.locator('tbody tr[data-index]').first().waitFor();
    expect(await renderedRows(table)).toEqual(expected);
    await expect(table.locator('th').allTextContents()).resolves.toEqual([
      BATCH_LABELS.sno,
      BATCH_LABELS.imei,
      BATCH_LABELS.status,
      BATCH_LABELS.reason,
    ]);

    const file = await downloadOf(page, () => button(outcome, BATCH_LABELS.downloadCsv).click());
    expect(file.name).toBe(IMEI_RESULTS_FILE_NAME);
    expect(await csvRows(file.text)).toEqual([[...IMEI_RESULTS_COLUMNS], ...expected]);

    await waitUntil('every device of the file to lock', () =>
      fleetPart.every((device) => device.state.locked),
    );
  });

  it('refuses a file that is not a CSV, and lists every invalid row with incorrect_data.csv; nothing is uploaded', async () => {
    const scope = await open('unlockDevice');
    const uploads = countCalls('bulkUnlockCopy.php');
    const [imei] = unknownImeis(1, 500) as [string];

    const [alert] = await Promise.all([
      nextAlert(page),
      chooseFile(scope, 'imeis.txt', imeiCsv([imei]), 'text/plain'),
    ]);
    expect(alert).toBe(MESSAGES.onlyCsv);
    await expect(scope.getByTestId('csv-errors').count()).resolves.toBe(0);

    const errors = scope.getByTestId('csv-errors');
    await chooseFile(scope, 'header.csv', `Serial,IMEI\r\n1,${imei}\r\n`);
    await errors.getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    await errors.getByRole('heading', { name: MESSAGES.invalidImeiSection }).waitFor();
    expect(await renderedRows(errors.getByTestId('invalid-rows'))).toEqual([
      ['1', MESSAGES.invalidHeaders, MESSAGES.headersNotMatched],
    ]);

    const text = ['Sno,IMEI1', `1,${imei}`, '2,12345', `3,${imei},x`, '4,35693803564380A', ''].join('\r\n');
    await chooseFile(scope, 'bad.csv', text);
    await errors.getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    await errors.getByRole('cell', { name: '2,12345', exact: true }).waitFor();
    expect(await renderedRows(errors.getByTestId('invalid-rows'))).toEqual([
      ['3', MESSAGES.invalidImeiLength, '2,12345'],
      ['4', MESSAGES.moreThanTwoColumns, `3,${imei},x`],
      ['5', MESSAGES.invalidImeiLength, '4,35693803564380A'],
    ]);
    const report = await downloadOf(page, () =>
      errors.getByRole('button', { name: CSV_LABELS.downloadIncorrect }).click(),
    );
    expect(report.name).toBe(ERROR_REPORT_FILE_NAME);
    expect(report.text.split('\r\n')).toEqual([
      'Sno,Incorrect Data,Error Message',
      `3,"2,12345","${MESSAGES.invalidImeiLength}"`,
      `4,"3,${imei},x",${MESSAGES.moreThanTwoColumns}`,
      `5,"4,35693803564380A","${MESSAGES.invalidImeiLength}"`,
    ]);
    expect(report.text).toBe(await incorrectDataCsv((await validateImeiCsv(text)).invalid));
    expect(uploads.count).toBe(0);
  });

  it("a refused upload alerts the server's message and shows it; a failed one 'An error occurred while uploading the file.'", async () => {
    const scope = await open('blockApp');
    const csv = imeiCsv(unknownImeis(2, 600));
    const script = '**/api/bulkBlockCopy.php';
    await page.route(script, (route) =>
      route.fulfill({
        status: 403,
        contentType: 'application/json',
        body: JSON.stringify({ status: 'error', code: 'FORBIDDEN', message: MESSAGES.unauthorised }),
      }),
    );
    const [refused] = await Promise.all([nextAlert(page), chooseFile(scope, 'refused.csv', csv)]);
    expect(refused).toBe(MESSAGES.unauthorised);
    await expect(scope.getByTestId('upload-error').textContent()).resolves.toBe(MESSAGES.unauthorised);

    await page.unroute(script);
    await page.route(script, (route) => route.abort('connectionrefused'));
    const [failed] = await Promise.all([nextAlert(page), chooseFile(scope, 'failed.csv', csv)]);
    expect(failed).toBe(MESSAGES.uploadError);
    await expect(scope.getByTestId('upload-error').textContent()).resolves.toBe(MESSAGES.uploadError);
    await page.unroute(script);
  });
});

describe('a Notify batch', () => {
  it('shows the File Preview with each generated header and message; Cancel sends nothing, Submit runs it', async () => {
    const [device] = devices(4, 1) as [SimulatedDevice];
    const [unknown] = unknownImeis(1, 700) as [string];
    const rows: NotifyCsvRow[] = [
      { name: 'Asha Verma', imei: device.imei, amount: '1499.50', date: '05/01/2031', template: 'Pre' },
      { name: 'Ravi Kumar', imei: unknown, amount: '250', date: '01/02/2024', template: 'Post' },
    ];
    const generated = rows.map((r) => notifyMessage(r.template, r));
    const scope = await open('enableNotification');
    const uploads = countCalls('bulkNotifyCopy.php');

    const preview = page.getByTestId('file-preview');
    await chooseFile(scope, 'reminders.csv', notifyCsv(rows));
    await preview.waitFor();
    await page.getByRole('dialog', { name: BATCH_LABELS.filePreview }).waitFor();
    const body = preview.getByTestId('file-preview-rows');
    await body.locator('tbody tr[data-index]').first().waitFor();
    expect(await renderedRows(body)).toEqual(
      rows.map((r, i) => [
        String(i + 1),
        r.name,
        r.imei,
        r.amount,
        r.date,
        r.template,
        generated[i]?.header,
        generated[i]?.message,
      ]),
    );
    expect(await heightOf(body)).toBeLessThanOrEqual(300);
    await button(preview, BATCH_LABELS.cancel).click();
    await preview.waitFor({ state: 'detached' });
    expect(uploads.count).toBe(0);

    await chooseFile(scope, 'reminders.csv', notifyCsv(rows));
    const upload = nextUpload('bulkNotifyCopy.php');
    await button(preview, BATCH_LABELS.submit).click();
    const { body: reply } = await upload;
    expect(reply).toMatchObject({ status: 'success', total: 2 });
    const outcome = scope.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 30_000 });
    expect(await summary(outcome)).toEqual({ total: 2, valid: 2, invalid: 0, found: 1, notFound: 1 });

    const file = await downloadOf(page, () => button(outcome, BATCH_LABELS.downloadCsv).click());
    expect(file.name).toBe('reminders.csv');
    expect(await csvRows(file.text)).toEqual([
      [...NOTIFY_RESULTS_COLUMNS],
      ...rows.map((r, i) => [
        String(i + 1),
        r.name,
        r.imei,
        r.amount,
        r.date,
        r.template,
        generated[i]?.header,
        generated[i]?.message,
        i === 0 ? 'Yes' : 'No',
        i === 0 ? '' : 'not registered',
      ]),
    ]);
    await waitUntil('the reminder to reach the device', () =>
      device.received.some((m) => m.command === 'NOTIFY' && device.executions.has(m.id)),
    );
    expect(device.received.find((m) => m.command === 'NOTIFY')?.options).toEqual({
      caseType: 'Pre',
      message: generated[0]?.message,
    });
  });
});

describe('the graded batch', () => {
  it('enables the file selector only once a grade is chosen, and sends that grade', async () => {
    const [device] = devices(5, 1) as [SimulatedDevice];
    const scope = await open('gradeDisableApp');
    const picker = labelled(scope, BATCH_LABELS.chooseFile);
    const grade = labelled(scope, BATCH_LABELS.grade);
    await expect(picker.isDisabled()).resolves.toBe(true);
    const options = await grade
      .locator('option')
      .evaluateAll((all) => all.map((o) => [(o as HTMLOptionElement).value, o.textContent]));
    expect(options).toEqual([
      ['', BATCH_LABELS.selectGrade],
      ['level1', 'Grade 1'],
      ['level2', 'Grade 2'],
    ]);
    await grade.selectOption('level2');
    await expect(picker.isEnabled()).resolves.toBe(true);

    const upload = nextUpload('bulkGreyCopy.php');
    await chooseFile(scope, 'grey.csv', imeiCsv([device.imei]));
    expect((await upload).status).toBe(200);
    await scope.getByTestId('batch-outcome').waitFor({ timeout: 30_000 });
    // The grade went with the file (the command without a level greys at level 1).
    await waitUntil('the device to grey its apps at level 2', () => device.state.greyed === 'level2');
    expect(device.received.filter((m) => m.command === 'GREYAPP').map((m) => m.options)).toEqual([
      { level: 'level2' },
    ]);
  });
});

describe('the resume card', () => {
  it('Pause stops a running batch; after a reload the card shows it; Cancel hides it; Process finishes it exactly once', async () => {
    const part = devices(6, 3);
    const imeis = [part[0]?.imei, ...unknownImeis(50_000, 10_000), part[1]?.imei, part[2]?.imei] as string[];
    let scope = await open('activateAlarm');
    const upload = nextUpload('bulkSetAlarmCopy.php');
    await chooseFile(scope, 'alarms.csv', imeiCsv(imeis));
    const { batchId } = (await upload).body;

    const running = scope.getByTestId('batch-running');
    await running.getByText(MESSAGES.executingBatch, { exact: true }).waitFor();
    await running.getByRole('progressbar').waitFor();
    await someProcessed(batchId);
    await button(running, BATCH_LABELS.pause).click();
    await resumeCard().getByRole('heading', { name: MESSAGES.incompleteBatch }).waitFor();
    const paused = await settled(batchId);
    expect(paused.phase).toBe('paused');
    expect(paused.processed).toBeLessThan(imeis.length);

    await page.reload();
    scope = panel();
    const card = resumeCard();
    await card.getByRole('heading', { name: MESSAGES.incompleteBatch }).waitFor();
    await expect(card.getByTestId('resume-file').textContent()).resolves.toBe(
      `${BATCH_LABELS.fileName}: alarms.csv`,
    );
    await expect(card.getByTestId('resume-last-imei').textContent()).resolves.toBe(
      `${BATCH_LABELS.lastImei}: ${paused.lastimei}`,
    );
    expect(imeis).toContain(paused.lastimei);

    // Cancel hides the card and shows the upload card; the batch waits on the server.
    await button(card, BATCH_LABELS.cancel).click();
    await card.waitFor({ state: 'detached' });
    await labelled(scope, BATCH_LABELS.chooseFile).waitFor();
    expect((await api.progress(batchId)).phase).toBe('paused');

    scope = await open('activateAlarm');
    await button(resumeCard(), BATCH_LABELS.process).click();
    const outcome = scope.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 60_000 });
    expect(await summary(outcome)).toEqual({
      total: imeis.length,
      valid: imeis.length,
      invalid: 0,
      found: 3,
      notFound: imeis.length - 3,
    });
    const done = await api.progress(batchId);
    expect(done).toMatchObject({ phase: 'complete', processed: imeis.length, found: 3 });
    await expectProcessedOnce(batchId, imeis);
    await waitUntil('the three devices to sound their alarm', () =>
      part.every((device) => device.state.alarm),
    );
    for (const device of part) {
      expect(device.received.filter((m) => m.command === 'SETALARM')).toHaveLength(1);
    }
  });

  it('New Batch discards the batch and shows the upload card; Notify has no Cancel', async () => {
    for (const [script, statusOf, screen, csv] of [
      [
        'bulkDisableCameraCopy.php',
        'disablecamerafiles',
        'disableCamera',
        imeiCsv(unknownImeis(20_000, 100_000)),
      ],
      [
        'bulkNotifyCopy.php',
        'notifyfiles',
        'enableNotification',
        notifyCsv(
          unknownImeis(20_000, 200_000).map((imei) => ({
            name: 'Asha',
            imei,
            amount: '10',
            date: '01/01/2031',
            // A future date: a Pre row (a Due row must be dated today).
            template: 'Pre' as const,
          })),
        ),
      ],
    ] as const) {
      const batchId = await api.upload(script, `${screen}.csv`, csv);
      await api.pause(batchId);
      const scope = await open(screen);
      const card = resumeCard();
      await expect(card.getByTestId('resume-file').textContent()).resolves.toBe(
        `${BATCH_LABELS.fileName}: ${screen}.csv`,
      );
      await expect(button(card, BATCH_LABELS.cancel).count()).resolves.toBe(
        screen === 'disableCamera' ? 1 : 0,
      );
      await button(card, BATCH_LABELS.newBatch).click();
      await card.waitFor({ state: 'detached' });
      await labelled(scope, BATCH_LABELS.chooseFile).waitFor();
      expect((await api.progress(batchId)).phase).toBe('cancelled');
      await expect(api.current(statusOf)).resolves.toBeNull();
    }
  });

  it("a batch paused because its owner was disabled says so on the owner's resume card once they are back", async () => {
    const owner = batchApi(server.baseUrl, await apiToken(server.baseUrl, USERS.locker), USERS.locker.email);
    const batchId = await owner.upload(
      'bulkLockCopy.php',
      'owner.csv',
      imeiCsv(unknownImeis(20_000, 400_000)),
    );
    await owner.pause(batchId);
    const admin = await apiToken(server.baseUrl, USERS.admin);
    const setStatus = (status: 'ACTIVE' | 'INACTIVE') =>
      apiCall(server.baseUrl, admin, '/api/updateUserStatus.php', { email: USERS.locker.email, status });
    await setStatus('INACTIVE');
    expect(await api.progress(batchId)).toMatchObject({ phase: 'paused', pausedReason: OWNER_DISABLED });
    await setStatus('ACTIVE');

    const ownerConsole = await openConsole(browser, server.baseUrl);
    try {
      await signIn(ownerConsole.page, codec, USERS.locker);
      await ownerConsole.page.goto('/lockDevice');
      const card = ownerConsole.page.getByTestId('resume-card');
      await expect(card.getByTestId('resume-reason').textContent()).resolves.toBe(OWNER_DISABLED);
      await expect(card.getByTestId('resume-file').textContent()).resolves.toBe(
        `${BATCH_LABELS.fileName}: owner.csv`,
      );
      // The owner, back in good standing, discards it (New Batch).
      await button(card, BATCH_LABELS.newBatch).click();
      await card.waitFor({ state: 'detached' });
      expect((await api.progress(batchId)).phase).toBe('cancelled');
      expect(ownerConsole.pageErrors).toEqual([]);
    } finally {
      await ownerConsole.close();
    }
  });

  it('Set Wallpaper (batch only) first downloads the processed IMEIs as {file}_processed.csv, then resumes', async () => {
    const [device] = devices(9, 1) as [SimulatedDevice];
    const imeis = [device.imei, ...unknownImeis(30_000, 300_000)];
    const batchId = await api.upload('bulkSetWallpaperCopy.php', 'wallpapers.csv', imeiCsv(imeis));
    await someProcessed(batchId);
    await api.pause(batchId);
    const paused = await settled(batchId);
    const processed = (await api.results(batchId)).filter((r) => r.validate !== null);
    expect(processed.length).toBe(paused.processed);

    // The batch alias shows the same batch-only screen.
    await open('batch');
    await expect(page.getByTestId('single-form').count()).resolves.toBe(0);
    const scope = await open('setWallpaper');
    await expect(page.getByTestId('single-form').count()).resolves.toBe(0);
    const card = resumeCard();
    await expect(card.getByTestId('resume-last-imei').textContent()).resolves.toBe(
      `${BATCH_LABELS.lastImei}: ${paused.lastimei}`,
    );
    await expect(button(card, BATCH_LABELS.cancel).count()).resolves.toBe(0);

    const file = await downloadOf(page, () => button(card, BATCH_LABELS.process).click());
    expect(file.name).toBe('wallpapers_processed.csv');
    expect(await csvRows(file.text)).toEqual([
      [...IMEI_RESULTS_COLUMNS],
      ...processed.map((r) => [
        String(r.sno),
        r.imei,
        String(r.validate),
        r.validate === 'not found' ? String(r.note) : '',
      ]),
    ]);
    const outcome = scope.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 60_000 });
    expect(await summary(outcome)).toMatchObject({
      total: imeis.length,
      found: 1,
      notFound: imeis.length - 1,
    });
    await expectProcessedOnce(batchId, imeis);
    await waitUntil('the device to set its wallpaper', () => device.state.wallpaper === true);
  });
});

describe('at scale', () => {
  it('runs a 100,000-row batch end to end with the right counts, and its results table scrolls', async () => {
    const part = devices(10, 4);
    const imeis = unknownImeis(100_000, 1_000_000);
    for (const [index, device] of [0, 25_000, 50_000, 99_999].map((at, i) => [at, part[i]] as const)) {
      imeis[index] = device?.imei ?? '';
    }
    const scope = await open('restoreApp');
    const upload = nextUpload('bulkUngreyCopy.php');
    await chooseFile(scope, 'hundred-thousand.csv', imeiCsv(imeis));
    const { batchId, total } = (await upload).body;
    expect(total).toBe(100_000);
    const running = scope.getByTestId('batch-running');
    await running.getByRole('progressbar').waitFor();
    await running.getByTestId('batch-progress').waitFor();

    const outcome = scope.getByTestId('batch-outcome');
    await outcome.waitFor({ timeout: 150_000 });
    const table = outcome.getByTestId('batch-results');
    await table.locator('tbody tr[data-index]').first().waitFor({ timeout: 30_000 });
    expect(await summary(outcome)).toEqual({
      total: 100_000,
      valid: 100_000,
      invalid: 0,
      found: 4,
      notFound: 99_996,
    });
    const progress = await api.progress(batchId);
    expect(progress).toMatchObject({ phase: 'complete', processed: 100_000, found: 4, notFound: 99_996 });

    // Only the rows in view are in the page, and only the pages scrolled to were read:
    // scrolling to the end of the rows read reads the next page.
    const first = await renderedRows(table);
    expect(first[0]).toEqual(['1', part[0]?.imei, 'found', '']);
    expect(first.length).toBeLessThan(100);
    expect(await heightOf(table)).toBeLessThanOrEqual(350);
    const count = outcome.getByTestId('results-count');
    await expect(count.textContent()).resolves.toBe(BATCH_LABELS.shownOf(1_000, 100_000));
    await table.evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    await table.getByRole('cell', { name: '1000', exact: true }).waitFor();
    await waitUntil(
      'the next page of results',
      async () => (await count.textContent()) === BATCH_LABELS.shownOf(2_000, 100_000),
    );
    await table.evaluate((element) => {
      element.scrollTop = element.scrollHeight;
    });
    await table.getByRole('cell', { name: '2000', exact: true }).waitFor();
    const last = await renderedRows(table);
    expect(last.at(-1)?.slice(2)).toEqual(['not found', 'not registered']);
    expect(last.length).toBeLessThan(100);

    const file = await downloadOf(page, () => button(outcome, BATCH_LABELS.downloadCsv).click());
    expect(file.name).toBe(IMEI_RESULTS_FILE_NAME);
    const lines = file.text.trimEnd().split('\r\n');
    expect(lines).toHaveLength(100_001);
    expect(lines[25_001]).toBe(`25001,${part[1]?.imei},found,`);
    expect(lines[2]).toBe(`2,${imeis[1]},not found,not registered`);
    expect(lines[100_000]).toBe(`100000,${part[3]?.imei},found,`);
  }, 240_000);

  // How fast the file is validated, and that the page keeps painting meanwhile, is measured by
  // bench/console-ui.ts (6b, with its targets); this test proves what the operator sees.
  it('validates a 1,000,000-row file in the browser under the evaluating overlay and reports its bad row', async () => {
    const scope = await open('lockDevice');
    const uploads = countCalls('bulkLockCopy.php');
    const lines = ['Sno,IMEI1'];
    for (let i = 1; i < 1_000_000; i++) lines.push(`${i},${356000000000000 + i}`);
    lines.push('1000000,12345');
    const buffer = Buffer.from(`${lines.join('\r\n')}\r\n`);

    // Whether the overlay said so while the file was evaluated.
    type Probe = { __overlay: boolean };
    await scope.locator('input[type="file"]').evaluate((_input, evaluating) => {
      const w = window as unknown as Probe;
      w.__overlay = false;
      new MutationObserver((_, observer) => {
        const status = [...document.querySelectorAll('[role="status"]')].map((e) => e.textContent);
        if (status.includes(evaluating)) w.__overlay = true;
        if (document.querySelector('[data-testid="csv-errors"]')) observer.disconnect();
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    }, MESSAGES.evaluatingBatch);
    await chooseFile(scope, 'million.csv', buffer);
    const errors = scope.getByTestId('csv-errors');
    await errors.waitFor({ timeout: 30_000 });
    expect(await page.evaluate(() => (window as unknown as Probe).__overlay)).toBe(true);
    await expect(scope.getByTestId('csv-facts').textContent()).resolves.toMatch(/million\.csv/);
    expect(await renderedRows(errors.getByTestId('invalid-rows'))).toEqual([
      ['1000001', MESSAGES.invalidImeiLength, '1000000,12345'],
    ]);
    expect(uploads.count).toBe(0);
  });
});
