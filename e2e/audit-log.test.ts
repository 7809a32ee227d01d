/**
 * The SUPERADMIN's Audit Log screen in a real browser against a real server: audited actions
 * are made through the API (sign-ins, a failed sign-in, a user added through addUser.php, a key
 * generated, a lock command to a simulated device), then found on the screen by user, action, IMEI and
 * date, and exported as the server's xlsx. An ADMIN cannot open the screen.
 */
import { MESSAGES, SUPERADMIN_PREFIX } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import ExcelJS from 'exceljs';
import type { Browser, Download, Locator, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { AuditRow, AuditSearchResult } from '../apps/web/src/api/audit';
import { AUDIT_LOG_COLUMNS, auditCells } from '../apps/web/src/pages/AuditLog/columns';
import { AUDIT_LOG_LABELS as L } from '../apps/web/src/pages/AuditLog/labels';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { type ApiSession, apiSession } from './support/commandFleet';
import { apiCall, apiToken, newEnrollmentSecret, randomSeed, startFleet } from './support/fleet';
import { utcDay } from './support/reportData';
import { type RunningServer, startServer } from './support/server';
import { PASSWORD, USERS } from './support/users';

const ENROLLMENT_SECRET = newEnrollmentSecret();
const TODAY = utcDay(0);
const TOMORROW = utcDay(1);
/** The account added through addUser.php (unique per run, so its rows are this run's). */
const NEW_USER = {
  email: `audit-e2e-${Date.now()}@lendlock.com`,
  phone: `8${String(Date.now()).slice(-9)}`,
};
const KEY_NAME = 'audit-log-e2e';
const SEARCH_PATH = '/api/v2/audit/search';
/** Every search carries the browser's time zone, whose days From and To are (e2e/timezones.test.ts). */
const ZONE_SENT = { timeZone: expect.any(String) };
const EXPORT_PATH = '/api/v2/audit/export';

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
let fleet: Fleet;
let imei: string;
let keyId: number;
let rootToken: string;
let adminApi: ApiSession;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);

/** The audit search over the API as the SUPERADMIN (plain JSON), every row in one page. */
function serverSearch(filter: Record<string, string>): Promise<AuditSearchResult> {
  return apiCall<AuditSearchResult>(server.baseUrl, rootToken, SEARCH_PATH, {
    ...filter,
    offset: 0,
    limit: 10_000,
  });
}

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({ templateDataDir: inject('templateDataDir'), env: () => ({ ENROLLMENT_SECRET }) }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  fleet = await startFleet({
    baseUrl: server.baseUrl,
    enrollmentSecret: ENROLLMENT_SECRET,
    devices: 1,
    seed: randomSeed(),
  });
  imei = fleet.devices[0]?.imei ?? '';
  expect(imei).toMatch(/^\d{15}$/);

  // The audited actions: two sign-ins, a user added, a key generated, a lock command, a failed sign-in.
  rootToken = await apiToken(server.baseUrl, USERS.superadmin);
  adminApi = await apiSession(server.baseUrl, USERS.admin.email);
  const added = await adminApi.post('addUser.php', {
    email: NEW_USER.email,
    phone: NEW_USER.phone,
    password: PASSWORD,
    permissions: [],
  });
  expect(added.status).toBe(200);
  ({ id: keyId } = await apiCall<{ id: number }>(server.baseUrl, adminApi.token, '/keyapi/generate_key.php', {
    key_name: KEY_NAME,
    password: PASSWORD,
  }));
  const locked = await adminApi.post('locknotification.php', { imei, action: 'lock' });
  expect(locked.status).toBe(200);
  const refused = await fetch(`${server.baseUrl}/api/login.php`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: NEW_USER.email, password: 'Wrong#Password1' }),
  });
  expect(refused.status).toBe(401);
  await waitUntil('the lock command is in the audit log', async () =>
    (await serverSearch({ imei })).items.some((row: { action: string }) => row.action.startsWith('command.')),
  );
}, 180_000);

afterAll(async () => {
  await fleet?.stop();
  await browser?.close();
  await server?.stop();
});

/** Opens the screen: it searches the last 7 days at once (the browser's days, UTC here). */
async function openAuditLog(): Promise<Page> {
  const { page } = consolePage;
  await signIn(page, codec, USERS.superadmin);
  const opening = page.waitForRequest(isCall(SEARCH_PATH));
  await page.getByTestId('nav-auditLog').click();
  await page.waitForURL((url) => url.pathname === `${SUPERADMIN_PREFIX}/auditLog`);
  await page.getByRole('heading', { name: screenTitle('auditLog'), exact: true }).waitFor();
  expect(codec.open<Record<string, unknown>>((await opening).postDataJSON())).toEqual({
    from: utcDay(-6),
    to: TODAY,
    offset: 0,
    limit: 500,
    ...ZONE_SENT,
  });
  await results(page).getByTestId('audit-count').waitFor();
  return page;
}

const button = (page: Page, name: string) => page.getByRole('button', { name, exact: true });
const isCall = (path: string) => (request: Request) => new URL(request.url()).pathname === path;

/** Fills the form: every field named is set, the others cleared. */
async function fillForm(
  page: Page,
  values: { imei?: string; user?: string; action?: string; from?: string; to?: string },
) {
  await fieldLabelled(page, L.imei).fill(values.imei ?? '');
  await fieldLabelled(page, L.user).fill(values.user ?? '');
  await fieldLabelled(page, L.action).fill(values.action ?? '');
  await fieldLabelled(page, L.from).fill(values.from ?? '');
  await fieldLabelled(page, L.to).fill(values.to ?? '');
}

/** The results card once a page has loaded (at `offset`). */
function results(page: Page, offset = 0): Locator {
  return page.locator(`[data-testid="audit-results"][data-state="ready"][data-offset="${offset}"]`);
}

/** Presses Search; resolves with what was sent and the total the screen shows. */
async function search(page: Page): Promise<{ sent: Record<string, unknown>; shownTotal: number }> {
  const request = page.waitForRequest(isCall(SEARCH_PATH));
  await button(page, L.search).click();
  const sent = codec.open<Record<string, unknown>>((await request).postDataJSON());
  const count = results(page).getByTestId('audit-count');
  await count.waitFor();
  return { sent, shownTotal: Number(await count.getAttribute('data-total')) };
}

/** The texts of the rendered rows, cell by cell. */
async function renderedRows(page: Page): Promise<string[][]> {
  return page
    .getByTestId('audit-rows')
    .locator('tbody tr.virtual-row')
    .evaluateAll((rows) =>
      rows.map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '')),
    );
}

/** What the screen shows for the server's rows (the first `count` of them). */
const expectedRows = (rows: readonly AuditRow[], count: number) => rows.slice(0, count).map(auditCells);

/** Runs `action` and returns the download it starts. */
async function download(page: Page, action: () => Promise<void>): Promise<{ name: string; file: string }> {
  const started = page.waitForEvent('download');
  await action();
  const done: Download = await started;
  return { name: done.suggestedFilename(), file: (await done.path()) ?? '' };
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A cell's text: a date cell as the wall clock it shows (`YYYY-MM-DD HH:mm:ss`), else ExcelJS's text. */
function cellText(cell: ExcelJS.Cell): string {
  const value = cell.value;
  if (!(value instanceof Date)) return cell.text;
  return (
    `${value.getUTCFullYear()}-${pad(value.getUTCMonth() + 1)}-${pad(value.getUTCDate())} ` +
    `${pad(value.getUTCHours())}:${pad(value.getUTCMinutes())}:${pad(value.getUTCSeconds())}`
  );
}

/** Every row of the first sheet of an xlsx file as cell texts, as wide as the sheet (empty cells ''). */
async function sheetRows(file: string): Promise<string[][]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new Error('no sheet');
  const rows: string[][] = [];
  sheet.eachRow((row) => {
    const cells: string[] = [];
    const width = Math.max(sheet.columnCount, row.cellCount);
    for (let column = 1; column <= width; column++) cells.push(cellText(row.getCell(column)));
    rows.push(cells);
  });
  return rows;
}

describe('Audit Log search', () => {
  it("searching by user shows that user's rows, newest first, exactly as the server holds them", async () => {
    const page = await openAuditLog();
    await fillForm(page, { user: USERS.admin.email });
    const { sent, shownTotal } = await search(page);
    expect(sent).toEqual({ user: USERS.admin.email, offset: 0, limit: 500, ...ZONE_SENT });

    const answer = await serverSearch({ user: USERS.admin.email });
    expect(shownTotal).toBe(answer.total);
    // The admin's sign-in, the user it added, the key it generated and its lock command.
    const actions = answer.items.map((row) => row.action);
    expect(actions).toEqual(expect.arrayContaining(['login', 'user.add', 'key.generate']));
    expect(actions.some((action) => action.startsWith('command.'))).toBe(true);
    expect(answer.items.find((row) => row.action === 'user.add')?.target).toBe(NEW_USER.email);

    const header = await page
      .getByTestId('audit-rows')
      .locator('thead th')
      .evaluateAll((cells) => cells.map((cell) => cell.textContent?.trim() ?? ''));
    expect(header).toEqual(['When', 'Who', 'What', 'Target', 'Address', 'Result', 'Details']);
    expect(header).toEqual(AUDIT_LOG_COLUMNS.map((column) => column.title));
    const rows = await renderedRows(page);
    expect(rows.length).toBe(answer.items.length);
    expect(rows).toEqual(expectedRows(answer.items, rows.length));
    expect(new Set(rows.map((row) => row[1]))).toEqual(new Set([USERS.admin.email]));
    await expect(results(page).getByTestId('audit-count').textContent()).resolves.toBe(
      `Rows 1–${answer.total} of ${answer.total}`,
    );

    // The failed sign-in of the new account is under its email, with its result.
    await fillForm(page, { user: NEW_USER.email.toUpperCase() });
    await search(page);
    const own = await renderedRows(page);
    expect(own.map((row) => [row[1], row[2], row[5]])).toEqual([
      [NEW_USER.email, 'login', 'invalid credentials'],
    ]);
  });

  it('searching by action prefix shows the key generations, and by IMEI the commands sent to the device', async () => {
    const page = await openAuditLog();
    await fillForm(page, { action: 'key.' });
    const byAction = await search(page);
    expect(byAction.sent).toEqual({ action: 'key.', offset: 0, limit: 500, ...ZONE_SENT });
    const keys = await serverSearch({ action: 'key.' });
    expect(byAction.shownTotal).toBe(keys.total);
    const keyRows = await renderedRows(page);
    expect(keyRows).toEqual(expectedRows(keys.items, keyRows.length));
    expect(new Set(keyRows.map((row) => row[2]))).toEqual(new Set(['key.generate']));
    const ours = keyRows.find((row) => row[3] === `key:${keyId}`);
    expect(ours?.[1]).toBe(USERS.admin.email);
    // The details read as labelled fields, not the JSON the log keeps.
    expect(ours?.[6]).toBe(`Key name: ${KEY_NAME}`);

    await fillForm(page, { imei });
    const byImei = await search(page);
    expect(byImei.sent).toEqual({ imei, offset: 0, limit: 500, ...ZONE_SENT });
    const commands = await serverSearch({ imei });
    expect(byImei.shownTotal).toBe(commands.total);
    const imeiRows = await renderedRows(page);
    expect(imeiRows.length).toBeGreaterThan(0);
    expect(imeiRows).toEqual(expectedRows(commands.items, imeiRows.length));
    expect(new Set(imeiRows.map((row) => row[3]))).toEqual(new Set([imei]));
    // The device's own registration, then the commands sent to it.
    expect(new Set(imeiRows.map((row) => (row[2]?.startsWith('command.') ? 'command.' : row[2])))).toEqual(
      new Set(['command.', 'device.register']),
    );
    expect(imeiRows.find((row) => row[2] === 'device.register')?.[1]).toBe(`device:${imei}`);
    expect(imeiRows.some((row) => row[1] === USERS.admin.email)).toBe(true);
  });

  it("From and To filter by the browser's day (UTC here); an end before the start shows 'End date cannot be prior to start date.' and sends nothing", async () => {
    const page = await openAuditLog();
    await fillForm(page, { user: USERS.admin.email, from: TODAY, to: TODAY });
    const today = await search(page);
    expect(today.sent).toEqual({
      user: USERS.admin.email,
      from: TODAY,
      to: TODAY,
      offset: 0,
      limit: 500,
      ...ZONE_SENT,
    });
    const answer = await serverSearch({ user: USERS.admin.email, from: TODAY, to: TODAY });
    expect(answer.total).toBeGreaterThan(0);
    expect(today.shownTotal).toBe(answer.total);
    expect((await renderedRows(page)).every((row) => row[0]?.startsWith(TODAY))).toBe(true);

    await fillForm(page, { user: USERS.admin.email, from: TOMORROW });
    const tomorrow = await search(page);
    expect(tomorrow.shownTotal).toBe(0);
    await results(page).getByText(L.noRows).waitFor();

    const asked: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v2/audit/')) asked.push(request.url());
    });
    await fillForm(page, { from: TOMORROW, to: TODAY });
    const error = page.getByTestId('audit-form-error');
    await button(page, L.search).click();
    await expect(error.textContent()).resolves.toBe(MESSAGES.endBeforeStart);
    await expect(error.textContent()).resolves.toBe('End date cannot be prior to start date.');
    await button(page, L.export).click();
    await expect(error.textContent()).resolves.toBe(MESSAGES.endBeforeStart);
    // The shown results stay those of the last search; nothing was asked.
    await results(page).waitFor();
    expect(asked).toEqual([]);

    // The server applies the same rule with the same message.
    const refused = await fetch(`${server.baseUrl}${SEARCH_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': rootToken },
      body: JSON.stringify({ from: TOMORROW, to: TODAY, offset: 0, limit: 10 }),
    });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { message: string }).message).toBe(MESSAGES.endBeforeStart);
  });

  it('a large result is paged through the total, each page in a 380 px area that scrolls to its last row', async () => {
    const page = await openAuditLog();
    const TOTAL = 1234;
    const asked: { offset: number; limit: number }[] = [];
    // The server's answer for a large log, paged by offset and limit as the search pages it.
    await page.route(`**${SEARCH_PATH}`, async (route) => {
      const body = codec.open<{ offset: number; limit: number }>(route.request().postDataJSON());
      asked.push({ offset: body.offset, limit: body.limit });
      const count = Math.max(0, Math.min(body.limit, TOTAL - body.offset));
      const items: AuditRow[] = Array.from({ length: count }, (_, i) => {
        const n = TOTAL - body.offset - i;
        return {
          id: n,
          at: '2030-01-01T00:00:00.000Z',
          actor: 'root@lendlock.com',
          action: 'command.LOCK',
          target: String(860000000000000 + n),
          address: '127.0.0.1',
          result: 'QUEUED',
          details: null,
        };
      });
      const answer = { status: 'success', items, total: TOTAL };
      await route.fulfill({ contentType: 'application/json', body: JSON.stringify(codec.seal(answer)) });
    });
    const { shownTotal } = await search(page);
    expect(shownTotal).toBe(TOTAL);
    await expect(results(page).getByTestId('audit-count').textContent()).resolves.toBe('Rows 1–500 of 1,234');

    const area = page.getByTestId('audit-rows');
    const height = await area.evaluate((el) => el.getBoundingClientRect().height);
    expect(height).toBeGreaterThanOrEqual(300);
    expect(height).toBeLessThanOrEqual(400);
    // Only a window of the 500 rows is in the page.
    expect((await renderedRows(page)).length).toBeLessThan(100);

    await page.getByTestId('audit-results').getByRole('button', { name: '3', exact: true }).click();
    await results(page, 1000).waitFor();
    await expect(results(page, 1000).getByTestId('audit-count').textContent()).resolves.toBe(
      'Rows 1,001–1,234 of 1,234',
    );
    await area.evaluate((el) => el.scrollTo(0, el.scrollHeight));
    await page.waitForFunction(() =>
      [...document.querySelectorAll('[data-testid="audit-rows"] tr.virtual-row td:nth-child(4)')].some(
        (cell) => cell.textContent === String(860000000000001),
      ),
    );

    await page.getByTestId('audit-results').getByRole('button', { name: '2', exact: true }).click();
    await results(page, 500).waitFor();
    const first = (await renderedRows(page))[0];
    expect(first?.[3]).toBe(String(860000000000000 + TOTAL - 500));
    expect(asked).toEqual([
      { offset: 0, limit: 500 },
      { offset: 1000, limit: 500 },
      { offset: 500, limit: 500 },
    ]);
  });

  it("'Cannot fetch the data now, please try again' when the search or the export fails", async () => {
    const page = await openAuditLog();
    await page.route(`**${SEARCH_PATH}`, (route) => route.abort('failed'));
    await page.route(`**${EXPORT_PATH}**`, (route) =>
      route.fulfill({ status: 500, contentType: 'application/json', body: '{"message":"boom"}' }),
    );
    await button(page, L.search).click();
    await expect(page.getByTestId('audit-error').textContent()).resolves.toBe(MESSAGES.cannotFetch);
    await expect(page.getByTestId('audit-error').textContent()).resolves.toBe(
      'Cannot fetch the data now, please try again',
    );
    await button(page, L.export).click();
    await expect(page.getByTestId('audit-export-error').textContent()).resolves.toBe(MESSAGES.cannotFetch);
  });
});

describe('Audit Log export', () => {
  it("saves the server's xlsx under audit-{from}-{to}.xlsx holding the search's rows", async () => {
    const page = await openAuditLog();
    await fillForm(page, { user: USERS.admin.email, from: TODAY, to: TODAY });
    const dated = await download(page, () => button(page, L.export).click());
    expect(dated.name).toBe(`audit-${TODAY}-${TODAY}.xlsx`);
    const rows = await sheetRows(dated.file);
    expect(rows[0]).toEqual(['Id', 'When', 'Who', 'What', 'Target', 'Address', 'Result', 'Details']);
    const answer = await serverSearch({ user: USERS.admin.email, from: TODAY, to: TODAY });
    const byId = (a: string[], b: string[]) => Number(a[0]) - Number(b[0]);
    expect(rows.slice(1).sort(byId)).toEqual(
      answer.items
        .map((row) => [
          String(row.id),
          // A date cell holding the time the screen shows (the browser's zone; UTC here, as this process).
          auditCells(row)[0] ?? '',
          row.actor,
          row.action,
          row.target ?? '',
          row.address ?? '',
          row.result,
          row.details ?? '',
        ])
        .sort(byId),
    );
    expect(rows.slice(1).map((row) => row[3])).toEqual(expect.arrayContaining(['user.add', 'key.generate']));

    await fillForm(page, { action: 'key.' });
    const keys = await download(page, () => button(page, L.export).click());
    expect(keys.name).toBe('audit-all-all.xlsx');
    const keyRows = (await sheetRows(keys.file)).slice(1);
    expect(keyRows).toHaveLength((await serverSearch({ action: 'key.' })).total);
    expect(new Set(keyRows.map((row) => row[3]))).toEqual(new Set(['key.generate']));
    expect(keyRows.map((row) => row[4])).toContain(`key:${keyId}`);
  });

  it('shows the progress while the file is prepared and streams', async () => {
    const page = await openAuditLog();
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    await page.route(`**${EXPORT_PATH}**`, async (route) => {
      await held;
      await route.continue();
    });
    await fillForm(page, { from: TODAY });
    const progress = page.getByTestId('audit-export-progress');
    const file = download(page, () => button(page, L.export).click());
    await progress.waitFor();
    await expect(progress.textContent()).resolves.toContain(`Exporting audit-${TODAY}-all.xlsx`);
    release();
    await expect(file).resolves.toMatchObject({ name: `audit-${TODAY}-all.xlsx` });
    await progress.waitFor({ state: 'detached' });
  });
});

describe('access', () => {
  it('an ADMIN has no Audit Log link and going to /superadmin/auditLog shows the unauthorised page', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-home').waitFor();
    await expect(page.getByTestId('nav-auditLog').count()).resolves.toBe(0);
    await page.goto(`${SUPERADMIN_PREFIX}/auditLog`);
    // Not /login, which would end the session (docs/features.md § Deviations from the spec, point 22):
    // the unauthorised page shows instead, and the ADMIN stays signed in.
    await page.getByText(MESSAGES.unauthorised, { exact: true }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`${SUPERADMIN_PREFIX}/auditLog`);
    await page.goto('/');
    await page.getByTestId('nav-home').waitFor();
    // The server refuses the ADMIN's search too.
    const refused = await fetch(`${server.baseUrl}${SEARCH_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': adminApi.token },
      body: JSON.stringify({ offset: 0, limit: 10 }),
    });
    expect(refused.status).toBe(403);
  });
});
