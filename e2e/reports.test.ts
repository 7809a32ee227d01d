/**
 * The Reports / Bulk Upload History Details screen in a real browser against a real server
 * holding the demo's history (registrations matched and unmatched, de-enrollments, releases, commands of
 * every kind from the console, the API and batches) plus a bulk upload made here through the API.
 */
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type BulkHistoryRow,
  type DeenrollRow,
  displayCommand,
  type ExecutedCommandRow,
  exportFileName,
  MESSAGES,
  REGISTRATION_FILTERS,
  REPORT_TABS,
  type RegistrationRow,
  type ReportTab,
  SUPERADMIN_PREFIX,
  validateReportForm,
} from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { waitUntil } from '@lendlock/testkit';
import ExcelJS from 'exceljs';
import type { Browser, Download, Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { AUDIT_LABELS } from '../apps/web/src/pages/Audit/labels';
import { REPORT_LABELS } from '../apps/web/src/pages/Reports/labels';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { apiCall, apiToken } from './support/fleet';
import { type SeededTemplate, seedDemoHistory, utcDay } from './support/reportData';
import { type RunningServer, startServer } from './support/server';
import { type Dialogs, watchDialogs } from './support/ui';
import { type TestUser, USERS } from './support/users';

/** The demo's fleet size: a few dozen devices give every tab rows. */
const DEMO_DEVICES = 30;
/**
 * The whole history and a little future: the demo spreads it over the past 21 days, and registers a phone
 * with a loan when its loan began (a step before its first instalment, up to 370 days back).
 */
const FROM = utcDay(-400);
const TO = utcDay(1);
const UPLOAD_NAME = 'wallpaper-e2e.csv';

interface ReportAnswer {
  items: Record<string, unknown>[];
  commanditems: ExecutedCommandRow[];
  total_items: number;
  total_commanditems: number;
}

let seeded: SeededTemplate;
let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let token: string;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
let dialogs: Dialogs;
let uploadedCsv: string;

const tab = (report: string): ReportTab => {
  const found = REPORT_TABS.find((t) => t.report === report);
  if (!found) throw new Error(`no tab ${report}`);
  return found;
};

/** downloadReports.php over the API (plain JSON), every row in one page. */
function apiReport(report: string, match?: string, range = { startdate: FROM, enddate: TO }) {
  return apiCall<ReportAnswer>(server.baseUrl, token, '/api/downloadReports.php', {
    report,
    ...range,
    ...(match ? { match } : {}),
    offset: 0,
    limit: 100_000,
  });
}

beforeAll(async () => {
  [seeded, browser] = await Promise.all([seedDemoHistory({ devices: DEMO_DEVICES }), launchBrowser()]);
  // Files are kept 1 s, so a test can see a link past UPLOAD_RETENTION. The sweep runs at start and then
  // hourly: within this file no file is deleted but the one a test removes itself.
  server = await startServer({ templateDataDir: seeded.dir, env: () => ({ UPLOAD_RETENTION: '1s' }) });
  ({ codec } = await serverCodec(server.baseUrl));
  token = await apiToken(server.baseUrl, USERS.admin);

  // A Set Wallpaper bulk upload of three registered phones, run to the end on the server.
  const registered = (await apiReport('registration', 'YES')).items as RegistrationRow[];
  const imeis = [...new Set(registered.map((r) => r.imei1))].slice(0, 3);
  uploadedCsv = ['Sno,IMEI1', ...imeis.map((imei, i) => `${i + 1},${imei}`)].join('\r\n');
  const form = new FormData();
  form.append('file', new Blob([uploadedCsv], { type: 'text/csv' }), UPLOAD_NAME);
  form.append('user', USERS.admin.email);
  const upload = await fetch(`${server.baseUrl}/api/bulkSetWallpaperCopy.php`, {
    method: 'POST',
    headers: { 'x-api-key': token },
    body: form,
  });
  const { batchId } = (await upload.json()) as { batchId: number };
  expect(upload.status).toBe(200);
  await waitUntil('the bulk upload processed', async () => {
    const { batch } = await apiCall<{ batch: { isComplete: string } }>(
      server.baseUrl,
      token,
      '/api/v2/batch/progress',
      { batchId },
    );
    return batch.isComplete === 'complete';
  });
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  seeded?.dispose();
});

beforeEach(() => {
  dialogs = watchDialogs(consolePage.page);
});

async function openReports(user: TestUser = USERS.admin): Promise<Page> {
  const { page } = consolePage;
  await signIn(page, codec, user);
  await page.getByTestId('nav-reports').click();
  await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
  return page;
}

async function fillRange(page: Page, from = FROM, to = TO) {
  await fieldLabelled(page, REPORT_LABELS.startDate).fill(from);
  await fieldLabelled(page, REPORT_LABELS.endDate).fill(to);
}

const chooseFilter = (page: Page, value: string) =>
  fieldLabelled(page, REPORT_LABELS.filter).selectOption(value);

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });

async function selectTab(page: Page, report: string) {
  await page.getByRole('tab', { name: tab(report).label, exact: true }).click();
}

/** The results of `report` once loaded. */
async function results(page: Page, report: string) {
  const loaded = page.locator(`[data-testid="report-results"][data-report="${report}"]`);
  await loaded.waitFor();
  return loaded;
}

async function shownCount(page: Page, report: string, part: 'items' | 'commands'): Promise<number> {
  const count = (await results(page, report)).getByTestId(`report-${part}-count`);
  return Number(await count.getAttribute('data-count'));
}

/** The texts of the rendered rows of a result table, cell by cell. */
async function renderedRows(page: Page, part: 'items' | 'commands'): Promise<string[][]> {
  return page
    .getByTestId(`report-${part}`)
    .locator('tbody tr.virtual-row')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
}

async function headerOf(page: Page, part: 'items' | 'commands'): Promise<string[]> {
  return page
    .getByTestId(`report-${part}`)
    .locator('thead th')
    .evaluateAll((cells) => cells.map((cell) => cell.textContent?.trim() ?? ''));
}

/** Runs `action` and returns the `count` downloads it starts, with their files. */
async function downloads(page: Page, count: number, action: () => Promise<void>) {
  const seen: Download[] = [];
  const all = new Promise<void>((resolve) => {
    const onDownload = (download: Download) => {
      seen.push(download);
      if (seen.length === count) {
        page.off('download', onDownload);
        resolve();
      }
    };
    page.on('download', onDownload);
  });
  await action();
  await all;
  return Promise.all(seen.map(async (d) => ({ name: d.suggestedFilename(), file: await d.path() })));
}

/** Every row of the first sheet of an xlsx file as cell texts. */
async function sheetRows(file: string): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new Error('no sheet');
  const rows: string[][] = [];
  sheet.eachRow((row) => {
    const cells: string[] = [];
    for (let column = 1; column <= row.cellCount; column++) cells.push(row.getCell(column).text);
    rows.push(cells);
  });
  return rows;
}

describe('Reports / Bulk Upload History Details', () => {
  it('has the twelve tabs of the spec, at /reports and /superadmin/reports', async () => {
    const page = await openReports();
    expect(new URL(page.url()).pathname).toBe('/reports');
    const labels = await page.getByRole('tab').allTextContents();
    expect(labels).toEqual([
      'Registrations',
      'De-enrollment/Re-registery Records',
      'Enable Notification History',
      'Set Wallpaper',
      'Remove Wallpaper',
      'Activate Alarm',
      'Deactivate Alarm',
      'Disable App',
      'Restore App',
      'Disable Camera',
      'Enable Camera',
      'Release Device History',
    ]);
    expect(labels).toEqual(REPORT_TABS.map((t) => t.label));
    for (const name of [
      REPORT_LABELS.submit,
      REPORT_LABELS.cancel,
      REPORT_LABELS.download,
      REPORT_LABELS.view,
    ])
      await button(page, name).waitFor();
    await page.getByRole('heading', { name: REPORT_LABELS.formTitle }).waitFor();

    await signIn(page, codec, USERS.superadmin);
    await page.getByTestId('nav-reports').click();
    await page.waitForURL((url) => url.pathname === `${SUPERADMIN_PREFIX}/reports`);
    await page.getByRole('heading', { name: screenTitle('reports') }).waitFor();
  });

  it('every tab loads exactly the rows downloadReports.php holds for the range', async () => {
    const page = await openReports();
    await fillRange(page);
    await chooseFilter(page, 'ALL');
    await button(page, REPORT_LABELS.submit).click();
    let commandRows = 0;
    for (const t of REPORT_TABS) {
      // A tab changed while results are shown loads the same range at once.
      if (t.report !== 'registration') await selectTab(page, t.report);
      const answer = await apiReport(t.report, t.kind === 'registration' ? 'ALL' : undefined);
      expect(await shownCount(page, t.report, 'items'), t.label).toBe(answer.total_items);
      expect(answer.items).toHaveLength(answer.total_items);
      if (t.kind === 'command') {
        expect(await shownCount(page, t.report, 'commands'), t.label).toBe(answer.total_commanditems);
        commandRows += answer.total_commanditems;
        if (answer.total_commanditems > 0) {
          const shown = await renderedRows(page, 'commands');
          // Rows in the server's order: S.No., Date and Time, IMEI 1, Transaction Id, …
          expect(shown[0]?.slice(2, 4)).toEqual([
            answer.commanditems[0]?.imei1,
            answer.commanditems[0]?.transactionId,
          ]);
        }
      } else {
        await expect(page.getByTestId('report-commands-count').count()).resolves.toBe(0);
        const first = answer.items[0] as { imei1: string } | undefined;
        if (first) expect((await renderedRows(page, 'items'))[0]).toContain(first.imei1);
      }
    }
    // The demo's history reaches the tabs: registrations, de-enrollments and commands of each kind.
    expect((await apiReport('registration', 'ALL')).total_items).toBeGreaterThanOrEqual(DEMO_DEVICES);
    expect((await apiReport('deenroll')).total_items).toBeGreaterThan(0);
    expect((await apiReport('release')).total_commanditems).toBeGreaterThan(0);
    expect(commandRows).toBeGreaterThan(REPORT_TABS.length);
  });

  it('the registration table renders its last row on scrolling, numbered as the whole list', async () => {
    const page = await openReports();
    await fillRange(page);
    await chooseFilter(page, 'ALL');
    await button(page, REPORT_LABELS.submit).click();
    const total = await shownCount(page, 'registration', 'items');
    const area = page.getByTestId('report-items');
    const height = await area.evaluate((el) => el.getBoundingClientRect().height);
    expect(height).toBeGreaterThanOrEqual(300);
    expect(height).toBeLessThanOrEqual(400);
    await area.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await page.waitForFunction(
      (n) =>
        [...document.querySelectorAll('[data-testid="report-items"] tr.virtual-row td:first-child')].some(
          (cell) => cell.textContent === String(n),
        ),
      total,
    );
    const answer = await apiReport('registration', 'ALL');
    const last = answer.items.at(-1) as RegistrationRow;
    const rows = await renderedRows(page, 'items');
    expect(rows.at(-1)?.[0]).toBe(String(total));
    expect(rows.at(-1)?.[2]).toBe(last.imei1);
  });

  it('the registration filter: Matched and Unmatched show the YES and NO rows, together All', async () => {
    const page = await openReports();
    await fillRange(page);
    const counts: Record<string, number> = {};
    for (const filter of REGISTRATION_FILTERS) {
      await chooseFilter(page, filter.value);
      await button(page, REPORT_LABELS.submit).click();
      const answer = await apiReport('registration', filter.value);
      await page.waitForFunction(
        (n) => document.querySelector('[data-testid="report-items-count"]')?.getAttribute('data-count') === n,
        String(answer.total_items),
      );
      counts[filter.value] = answer.total_items;
      const statuses = new Set((await renderedRows(page, 'items')).map((row) => row[4]));
      if (filter.value !== 'ALL') expect([...statuses]).toEqual([filter.value]);
      else expect([...statuses].sort()).toEqual(['NO', 'YES']);
    }
    expect(counts.YES).toBeGreaterThan(0);
    expect(counts.NO).toBeGreaterThan(0);
    expect((counts.YES ?? 0) + (counts.NO ?? 0)).toBe(counts.ALL);
  });

  it("the form: dates required, the filter required on Registrations only, 'End date cannot be prior to start date.'", async () => {
    const page = await openReports();
    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/downloadReports.php') || request.url().includes('/reports/export'))
        asked.push(request.url());
    });
    const error = page.getByTestId('report-form-error');

    await button(page, REPORT_LABELS.submit).click();
    await expect(error.textContent()).resolves.toBe(
      validateReportForm({ report: 'registration', startdate: '', enddate: '' }),
    );

    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    const filterRequired = validateReportForm({ report: 'registration', startdate: FROM, enddate: TO });
    expect(filterRequired).not.toBeNull();
    await expect(error.textContent()).resolves.toBe(filterRequired);
    await button(page, REPORT_LABELS.download).click();
    await expect(error.textContent()).resolves.toBe(filterRequired);

    await fillRange(page, TO, FROM);
    await chooseFilter(page, 'ALL');
    await button(page, REPORT_LABELS.submit).click();
    await expect(error.textContent()).resolves.toBe(MESSAGES.endBeforeStart);
    await button(page, REPORT_LABELS.download).click();
    await expect(error.textContent()).resolves.toBe(MESSAGES.endBeforeStart);

    // Other tabs have no filter and need none.
    await selectTab(page, 'deenroll');
    await expect(fieldLabelled(page, REPORT_LABELS.filter).count()).resolves.toBe(0);
    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    await results(page, 'deenroll');
    expect(asked).toHaveLength(1);
  });

  it("the server's own message is alerted when it refuses the range", async () => {
    const page = await openReports();
    // The console never sends a start after the end; swap the dates on the way to see the server's answer.
    await page.route('**/api/downloadReports.php', async (route) => {
      const body = codec.open<Record<string, string>>(route.request().postDataJSON());
      const swapped = { ...body, startdate: body.enddate, enddate: body.startdate };
      await route.continue({ postData: JSON.stringify(codec.seal(swapped)) });
    });
    await selectTab(page, 'deenroll');
    await fillRange(page, FROM, utcDay(0));
    await button(page, REPORT_LABELS.submit).click();
    await expect(dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.endBeforeStart });
    await expect(page.getByTestId('report-error').textContent()).resolves.toBe(MESSAGES.endBeforeStart);
  });

  it("'Something went wrong.Please try again in sometime' when the server cannot be reached", async () => {
    const page = await openReports();
    await page.route('**/api/downloadReports.php', (route) => route.abort('failed'));
    await page.route('**/api/v2/reports/export**', (route) => route.abort('failed'));
    await selectTab(page, 'release');
    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    await expect(dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.reportFailure });
    await expect(page.getByTestId('report-error').textContent()).resolves.toBe(MESSAGES.reportFailure);
    await button(page, REPORT_LABELS.download).click();
    await expect(dialogs.next()).resolves.toEqual({ type: 'alert', message: MESSAGES.reportFailure });
  });

  it('View hides and shows the tables; Cancel clears the form and the results', async () => {
    const page = await openReports();
    await selectTab(page, 'deenroll');
    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    await results(page, 'deenroll');
    const view = button(page, REPORT_LABELS.view);
    await view.click();
    await page.getByTestId('report-results').waitFor({ state: 'detached' });
    await expect(view.getAttribute('aria-pressed')).resolves.toBe('false');
    await view.click();
    await results(page, 'deenroll');

    await button(page, REPORT_LABELS.cancel).click();
    await page.getByTestId('report-results').waitFor({ state: 'detached' });
    await expect(fieldLabelled(page, REPORT_LABELS.startDate).inputValue()).resolves.toBe('');
    await expect(fieldLabelled(page, REPORT_LABELS.endDate).inputValue()).resolves.toBe('');
    await expect(view.isDisabled()).resolves.toBe(true);
  });
});

describe('Downloads', () => {
  it('each export is saved under the spec name; a registration export reads back with its header and rows', async () => {
    const page = await openReports();
    await fillRange(page);
    await chooseFilter(page, 'YES');
    const [registrations] = await downloads(page, 1, () => button(page, REPORT_LABELS.download).click());
    expect(registrations?.name).toBe(`Registration_Status_Matched-${FROM}-${TO}.xlsx`);
    expect(registrations?.name).toBe(exportFileName('registration', 'items', FROM, TO, 'YES'));
    const rows = await sheetRows(registrations?.file ?? '');
    expect(rows[0]).toEqual([
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
    const answer = await apiReport('registration', 'YES');
    const expected = answer.items as RegistrationRow[];
    expect(rows.slice(1)).toHaveLength(expected.length);
    expect(rows.slice(1).map((row) => row[0])).toEqual(expected.map((r) => r.imei1));
    expect(new Set(rows.slice(1).map((row) => row[2]))).toEqual(new Set(['YES']));

    for (const filter of REGISTRATION_FILTERS.filter((f) => f.value !== 'YES')) {
      await chooseFilter(page, filter.value);
      const [file] = await downloads(page, 1, () => button(page, REPORT_LABELS.download).click());
      expect(file?.name).toBe(`Registration_Status_${filter.file}-${FROM}-${TO}.xlsx`);
    }

    await selectTab(page, 'deenroll');
    const [deenroll] = await downloads(page, 1, () => button(page, REPORT_LABELS.download).click());
    expect(deenroll?.name).toBe(`deenroll_record-${FROM}-${TO}.xlsx`);
    const deenrollRows = await sheetRows(deenroll?.file ?? '');
    expect(deenrollRows.slice(1).map((row) => row[0])).toEqual(
      ((await apiReport('deenroll')).items as DeenrollRow[]).map((r) => r.imei1),
    );
  });

  it('a command tab downloads its bulk-upload history and its executed commands (mapped names, S/A/B)', async () => {
    const page = await openReports();
    await selectTab(page, 'setwallpaper');
    await fillRange(page);
    const files = await downloads(page, 2, () => button(page, REPORT_LABELS.download).click());
    expect(files.map((f) => f.name)).toEqual([
      `setwallpaper-bulkUpload-${FROM}-${TO}.xlsx`,
      `report-${FROM}-${TO}.xlsx`,
    ]);
    const history = await sheetRows(files[0]?.file ?? '');
    expect(history[0]).toEqual([
      'Id',
      'Date and Time',
      'File',
      'Old File',
      'Is Complete',
      'Last IMEI',
      'Remarks',
    ]);
    expect(history.slice(1).map((row) => row[3])).toEqual([UPLOAD_NAME]);
    const commands = await sheetRows(files[1]?.file ?? '');
    const answer = await apiReport('setwallpaper');
    expect(commands).toHaveLength(answer.total_commanditems + 1);
    expect(new Set(commands.slice(1).map((row) => row[5]))).toEqual(new Set(['SET WALLPAPER']));
    expect(commands.slice(1).map((row) => row[4])).toEqual(answer.commanditems.map((c) => c.interface));
  });

  it('shows the export progress while the file is prepared and streams', async () => {
    const page = await openReports();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route('**/api/v2/reports/export**', async (route) => {
      await held;
      await route.continue();
    });
    await selectTab(page, 'deenroll');
    await fillRange(page);
    const progress = page.getByTestId('export-progress');
    const file = downloads(page, 1, () => button(page, REPORT_LABELS.download).click());
    await progress.waitFor();
    await expect(progress.textContent()).resolves.toContain(`Exporting deenroll_record-${FROM}-${TO}.xlsx`);
    release();
    await expect(file).resolves.toMatchObject([{ name: `deenroll_record-${FROM}-${TO}.xlsx` }]);
    await progress.waitFor({ state: 'detached' });
  });

  it('a bulk-upload history link downloads the uploaded CSV', async () => {
    const page = await openReports();
    await selectTab(page, 'setwallpaper');
    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    const answer = await apiReport('setwallpaper');
    const row = answer.items[0] as BulkHistoryRow;
    expect(await shownCount(page, 'setwallpaper', 'items')).toBe(1);
    expect(row.oldfile).toBe(UPLOAD_NAME);
    const link = page.getByTestId('report-items').getByRole('link', { name: UPLOAD_NAME });
    await expect(link.getAttribute('href')).resolves.toBe(row.file);
    const [csv] = await downloads(page, 1, () => link.click());
    expect(csv?.name).toBe(UPLOAD_NAME);
    await expect(readFile(csv?.file ?? '', 'utf8')).resolves.toBe(uploadedCsv);
  });

  it('a history link whose file was removed after UPLOAD_RETENTION shows why, instead of a download', async () => {
    // A Remove Wallpaper upload past the retention (1 s here) whose file is gone from the uploads folder.
    const form = new FormData();
    form.append('file', new Blob([uploadedCsv], { type: 'text/csv' }), 'old-wallpaper.csv');
    const upload = await fetch(`${server.baseUrl}/api/bulkUnsetWallpaperCopy.php`, {
      method: 'POST',
      headers: { 'x-api-key': token },
      body: form,
    });
    expect(upload.status).toBe(200);
    const uploadedAt = Date.now();
    await waitUntil('the upload is older than UPLOAD_RETENTION', async () => Date.now() - uploadedAt > 1500);
    const row = (await apiReport('removewallpaper')).items[0] as BulkHistoryRow;
    rmSync(join(server.dataDir, 'uploads', (row.file ?? '').replace('/api/v2/uploads/', '')));

    const page = await openReports();
    await selectTab(page, 'removewallpaper');
    await fillRange(page);
    await button(page, REPORT_LABELS.submit).click();
    await page.getByTestId('report-items').getByRole('link', { name: 'old-wallpaper.csv' }).click();
    const removed = page.getByTestId('upload-removed');
    await removed.waitFor();
    await expect(removed.textContent()).resolves.toBe(
      'This file was removed after 1 second (UPLOAD_RETENTION).',
    );
    // The text stands in place of the link; no alert, no download.
    expect(
      await page.getByTestId('report-items').getByRole('link', { name: 'old-wallpaper.csv' }).count(),
    ).toBe(0);
    expect(dialogs.seen).toEqual([]);
  });
});

describe('Result tables', () => {
  it('executed commands show the interface S, A or B and the display names (SET WALLPAPER, ACTIVATE ALARM)', async () => {
    const page = await openReports();
    await fillRange(page);
    for (const [report, shown] of [
      ['setwallpaper', 'SET WALLPAPER'],
      ['activatealarm', 'ACTIVATE ALARM'],
      ['restoreapp', 'RESTORE APP'],
    ] as const) {
      await selectTab(page, report);
      await button(page, REPORT_LABELS.submit).click();
      const answer = await apiReport(report);
      expect(await shownCount(page, report, 'commands')).toBe(answer.total_commanditems);
      expect(await headerOf(page, 'commands')).toEqual([
        REPORT_LABELS.sno,
        REPORT_LABELS.dateAndTime,
        REPORT_LABELS.imei1,
        REPORT_LABELS.transactionId,
        REPORT_LABELS.interface,
        REPORT_LABELS.command,
        REPORT_LABELS.commandType,
        REPORT_LABELS.status,
        REPORT_LABELS.user,
        REPORT_LABELS.createdAt,
      ]);
      const rows = await renderedRows(page, 'commands');
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((row) => row[5]))).toEqual(new Set([shown]));
      expect(rows.map((row) => row[4])).toEqual(
        answer.commanditems.slice(0, rows.length).map((c) => c.interface),
      );
      expect(rows.every((row) => ['S', 'A', 'B'].includes(row[4] ?? ''))).toBe(true);
      expect(displayCommand(answer.commanditems[0]?.command ?? '')).toBe(shown);
    }
    // The bulk upload's commands are there as interface B.
    await selectTab(page, 'setwallpaper');
    const interfaces = (await renderedRows(page, 'commands')).map((row) => row[4]);
    expect(interfaces).toContain('B');
  });

  it('a 100,000-row answer is read page by page and rendered as a window of rows that scrolls to the end', async () => {
    const page = await openReports();
    const TOTAL = 100_000;
    const imeiAt = (i: number) => String(860000000000000 + i);
    const offsets: number[] = [];
    // The server's answer for a large fleet, paged by offset and limit as downloadReports.php pages it.
    await page.route('**/api/downloadReports.php', async (route) => {
      const asked = codec.open<{ offset: number; limit: number }>(route.request().postDataJSON());
      offsets.push(asked.offset);
      const count = Math.max(0, Math.min(asked.limit, TOTAL - asked.offset));
      const items: RegistrationRow[] = Array.from({ length: count }, (_, i) => ({
        imei1: imeiAt(asked.offset + i),
        imei2: null,
        Match_Status: 'YES',
        Registration_status: 'REGISTERED',
        date_and_time: '2030-01-01T00:00:00.000Z',
        Manufacturer: 'Xiaomi',
        Model: '13C',
        brand: 'Redmi',
        model: '13C',
        command: 'LOCKWALLPAPER',
        createdat: '2030-01-01T00:00:00.000Z',
      }));
      const answer = {
        status: 'success',
        message: `${TOTAL} rows, 0 commands`,
        items,
        commanditems: [],
        total_items: TOTAL,
        total_commanditems: 0,
        offset: asked.offset,
        limit: asked.limit,
      };
      await route.fulfill({ contentType: 'application/json', body: JSON.stringify(codec.seal(answer)) });
    });
    await fillRange(page);
    await chooseFilter(page, 'ALL');
    await button(page, REPORT_LABELS.submit).click();
    await page
      .locator(`[data-testid="report-items-count"][data-count="${TOTAL}"]`)
      .waitFor({ timeout: 45_000 });
    expect(offsets).toEqual(Array.from({ length: 10 }, (_, i) => i * 10_000));

    const area = page.getByTestId('report-items');
    const rendered = () => area.locator('tbody tr.virtual-row').count();
    expect(await rendered()).toBeLessThan(60);
    const first = await renderedRows(page, 'items');
    expect(first[0]?.slice(0, 3)).toEqual(['1', REPORT_LABELS.viewAudit, imeiAt(0)]);
    expect(first[0]?.at(-1)).toBe('SET WALLPAPER');

    await area.evaluate((el) => el.scrollTo(0, el.scrollHeight / 2));
    await page.waitForFunction(() => {
      const cell = document.querySelector('[data-testid="report-items"] tr.virtual-row td');
      return Number(cell?.textContent) > 40_000;
    });
    expect(await rendered()).toBeLessThan(60);

    await area.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="report-items"] tr.virtual-row td:first-child')].some(
        (cell) => cell.textContent === '100000',
      ),
    );
    const last = (await renderedRows(page, 'items')).at(-1);
    expect(last?.slice(0, 3)).toEqual(['100000', REPORT_LABELS.viewAudit, imeiAt(TOTAL - 1)]);
    expect(await rendered()).toBeLessThan(60);
  }, 90_000);

  it('View Audit on a registration row stores the IMEI and opens the audit report on it', async () => {
    const page = await openReports();
    await fillRange(page);
    await chooseFilter(page, 'ALL');
    await button(page, REPORT_LABELS.submit).click();
    await results(page, 'registration');
    const row = page.getByTestId('report-items').locator('tbody tr.virtual-row').nth(1);
    const imei = (await row.locator('td').nth(2).textContent()) ?? '';
    expect(imei).toMatch(/^\d{15}$/);
    await row.getByRole('button', { name: REPORT_LABELS.viewAudit }).click();
    await page.waitForURL((url) => url.pathname === '/auditReport');
    await page.getByRole('heading', { name: screenTitle('auditReport') }).waitFor();
    await expect(page.evaluate(() => localStorage.getItem('auditImei'))).resolves.toBe(imei);
    await expect(page.getByTestId('audit-imei').textContent()).resolves.toBe(`${AUDIT_LABELS.imei}: ${imei}`);
    await page
      .getByTestId('audit-registration')
      .getByRole('cell', { name: imei, exact: true })
      .first()
      .waitFor();
  });
});
