/**
 * Batch CSV files as the operator sees them in Chromium: a Notify file with a Pre row dated in
 * the past is refused with the date rule's message, before anything is uploaded; a semicolon-separated
 * file is told to be saved with commas; incorrect_data.csv starts with the UTF-8 BOM (so Excel shows
 * '₹' and names right); a file that repeats an IMEI says so in its summary before it runs.
 */
import {
  CSV_BOM,
  CSV_FORMAT_MESSAGES,
  CSV_SUMMARY_LABELS,
  MESSAGES,
  NOTIFY_DATE_RULES,
} from '@lendlock/contract';
import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { BATCH_LABELS } from '../apps/web/src/features/batch/labels';
import { CSV_LABELS } from '../apps/web/src/features/csv/labels';
import { chooseFile, downloadOf, notifyCsv, renderedRows, unknownImeis } from './support/batches';
import {
  type ConsolePage,
  launchBrowser,
  openConsole,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { newEnrollmentSecret } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

let server: RunningServer;
let browser: Browser;
let consolePage: ConsolePage;
let page: Page;

beforeAll(async () => {
  const enrollmentSecret = newEnrollmentSecret();
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  const { codec } = await serverCodec(server.baseUrl);
  consolePage = await openConsole(browser, server.baseUrl);
  page = consolePage.page;
  await signIn(page, codec, USERS.admin);
});

afterAll(async () => {
  if (consolePage) {
    expect(consolePage.pageErrors).toEqual([]);
    expect(await consolePage.cspViolations()).toEqual([]);
  }
  await browser?.close();
  await server?.stop();
});

const panel = () => page.getByTestId('batch-panel');

async function open(name: string): Promise<Locator> {
  await page.goto(`/${name}`);
  await page.getByRole('heading', { name: screenTitle(name), exact: true }).waitFor();
  await panel().getByRole('heading', { name: BATCH_LABELS.title }).waitFor();
  return panel();
}

/** Counts the requests to `/api/<script>` from now on. */
function countCalls(script: string): { readonly count: number } {
  const counter = { count: 0 };
  page.on('request', (request) => {
    if (new URL(request.url()).pathname === `/api/${script}`) counter.count++;
  });
  return counter;
}

/** The browser's own day as DD/MM/YYYY, `days` from today. */
async function browserDay(days: number): Promise<string> {
  return page.evaluate((offset) => {
    const date = new Date();
    date.setDate(date.getDate() + offset);
    const pad = (n: number) => String(n).padStart(2, '0');
    return `${pad(date.getDate())}/${pad(date.getMonth() + 1)}/${date.getFullYear()}`;
  }, days);
}

describe('what an operator sees of a CSV', () => {
  it("a Notify file with a Pre row dated in the past gets the date rule's message, and nothing is uploaded", async () => {
    const uploads = countCalls('bulkNotifyCopy.php');
    const scope = await open('enableNotification');
    const [imei, other] = unknownImeis(2, 910);
    const csv = notifyCsv([
      {
        name: 'Asha Verma',
        imei: imei as string,
        amount: '1499.50',
        date: await browserDay(-1),
        template: 'Pre',
      },
      {
        name: 'Ravi Kumar',
        imei: other as string,
        amount: '250',
        date: await browserDay(0),
        template: 'Due',
      },
    ]);
    await chooseFile(scope, 'reminders.csv', csv);
    const errors = scope.getByTestId('csv-errors');
    await errors.getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    const rows = await renderedRows(errors.getByTestId('invalid-rows'));
    expect(rows.map(([line, error]) => [line, error])).toEqual([
      ['2', `Incorrect fields: ${NOTIFY_DATE_RULES.Pre}`],
    ]);
    expect(uploads.count).toBe(0);
  });

  it('a semicolon-separated file is told to be saved as CSV with commas, and its incorrect_data.csv starts with the BOM', async () => {
    const scope = await open('lockDevice');
    const [imei] = unknownImeis(1, 920);
    await chooseFile(scope, 'semicolons.csv', `Sno;IMEI1\r\n1;${imei}\r\n`);
    const errors = scope.getByTestId('csv-errors');
    await errors.getByText(MESSAGES.csvIncorrect, { exact: true }).waitFor();
    expect(await renderedRows(errors.getByTestId('invalid-rows'))).toEqual([
      ['1', CSV_FORMAT_MESSAGES.semicolons, MESSAGES.headersNotMatched],
    ]);
    expect(CSV_FORMAT_MESSAGES.semicolons).toBe(
      'The file uses semicolons (;) to separate values: save it as CSV with commas.',
    );
    const report = await downloadOf(page, () =>
      errors.getByRole('button', { name: CSV_LABELS.downloadIncorrect }).click(),
    );
    expect(report.bom).toBe(true);
    expect(report.bytes.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
    expect(report.text.split('\r\n')[0]).toBe('Sno,Incorrect Data,Error Message');
    expect(CSV_BOM).toBe('\uFEFF');
  });

  it('a file that repeats an IMEI says so in its summary before it runs', async () => {
    const uploads = countCalls('bulkNotifyCopy.php');
    const scope = await open('enableNotification');
    const [a, b] = unknownImeis(2, 930) as [string, string];
    const date = await browserDay(7);
    const row = (imei: string, name: string) => ({
      name,
      imei,
      amount: '100',
      date,
      template: 'Pre' as const,
    });
    await chooseFile(scope, 'repeats.csv', notifyCsv([row(a, 'A'), row(b, 'B'), row(a, 'C'), row(a, 'D')]));
    const counts = scope.getByTestId('csv-counts');
    await counts.waitFor();
    expect(await counts.textContent()).toBe(
      `${CSV_LABELS.rows}: 4 · ${CSV_LABELS.validRows}: 4 · ${CSV_LABELS.invalidRows}: 0 · ${CSV_SUMMARY_LABELS.duplicates}: 2`,
    );
    expect(uploads.count).toBe(0);
  });
});
