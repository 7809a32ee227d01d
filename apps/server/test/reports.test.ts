/** Reports and history: every tab's query, the filter, paging, the export names and contents. */
import { exportFileName, MESSAGES, REPORT_TABS, type Session } from '@lendlock/contract';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

async function seed(database: TestDatabase): Promise<void> {
  const { db } = database;
  const at = (day: string) => `${day}T10:00:00Z`;
  await db
    .insertInto('registrations')
    .values([
      {
        imei1: '111111111111111',
        imei2: null,
        match_status: 'YES',
        registration_status: 'REGISTERED',
        brand: 'Samsung',
        model: 'A15',
        created_at: at('2026-03-01'),
      },
      {
        imei1: '222222222222222',
        imei2: null,
        match_status: 'NO',
        registration_status: 'REGISTERED',
        brand: '=HYPERLINK("x")',
        model: 'M14',
        created_at: at('2026-03-02'),
      },
      {
        imei1: '333333333333333',
        imei2: null,
        match_status: 'YES',
        registration_status: 'RE-REGISTERED',
        brand: 'vivo',
        model: 'Y17',
        created_at: at('2026-03-05'),
      },
      {
        imei1: '444444444444444',
        imei2: null,
        match_status: 'YES',
        registration_status: 'REGISTERED',
        brand: 'OPPO',
        model: 'A18',
        created_at: at('2026-04-01'),
      },
    ])
    .execute();
  await db
    .insertInto('deenrollments')
    .values([
      { imei1: '111111111111111', imei2: null, action: 'DEENROLLED', created_at: at('2026-03-03') },
      { imei1: '111111111111111', imei2: null, action: 'RE-REGISTERED', created_at: at('2026-03-04') },
    ])
    .execute();
  await db
    .insertInto('batches')
    .values([
      {
        feature: 'activatealarmfiles',
        command: 'SETALARM',
        file_name: 'alarm.csv',
        stored_file: 'activatealarmfiles/x-alarm.csv',
        user_label: 'a@lendlock.com',
        status: 'complete',
        last_imei: '111111111111111',
        created_at: at('2026-03-02'),
      },
      {
        feature: 'lockfiles',
        command: 'LOCK',
        file_name: 'lock.csv',
        user_label: 'a@lendlock.com',
        created_at: at('2026-03-02'),
      },
    ])
    .execute();
  await db
    .insertInto('commands')
    .values(
      Array.from({ length: 25 }, (_, i) => ({
        transaction_id: `t-${i}-${Math.random()}`,
        imei1: '111111111111111',
        command: i < 20 ? ('SETALARM' as const) : ('LOCK' as const),
        kind: 'state' as const,
        state_key: 'alarm',
        interface: (['S', 'A', 'B'] as const)[i % 3] ?? 'S',
        status: 'EXECUTED' as const,
        user_label: 'a@lendlock.com',
        created_at: at(i < 15 ? '2026-03-02' : '2026-05-01'),
      })),
    )
    .execute();
}

describe.each(databaseKinds())('reports on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let session: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    await seed(database);
    app = await buildTestApp(database);
    session = await loginAs(app, await buildUser(database, { permissions: ['reports'] }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const report = (body: object) =>
    app.inject({
      method: 'POST',
      url: '/api/downloadReports.php',
      headers: { 'x-api-key': session.token },
      payload: body,
    });
  const range = { startdate: '2026-03-01', enddate: '2026-03-31' };

  it('lists registrations in the range with the match filter', async () => {
    const all = (await report({ report: 'registration', ...range, match: 'ALL' })).json();
    expect(all.total_items).toBe(3);
    expect(all.items.map((r: { imei1: string }) => r.imei1)).toEqual([
      '111111111111111',
      '222222222222222',
      '333333333333333',
    ]);
    expect(all.items[0]).toMatchObject({
      Match_Status: 'YES',
      Registration_status: 'REGISTERED',
      brand: 'Samsung',
    });
    expect(all.commanditems).toEqual([]);
    expect((await report({ report: 'registration', ...range, match: 'YES' })).json().total_items).toBe(2);
    expect((await report({ report: 'registration', ...range, match: 'NO' })).json().total_items).toBe(1);
  });

  it('lists de-enrollment and re-registration records', async () => {
    const body = (await report({ report: 'deenroll', ...range })).json();
    expect(body.items.map((r: { action: string }) => r.action)).toEqual(['DEENROLLED', 'RE-REGISTERED']);
  });

  it('lists a command tab: its bulk-upload history and its executed commands only', async () => {
    const body = (await report({ report: 'activatealarm', ...range })).json();
    expect(body.total_items).toBe(1);
    expect(body.items[0]).toMatchObject({
      oldfile: 'alarm.csv',
      isComplete: 'complete',
      lastimei: '111111111111111',
      // The system's batch: a USER with `reports` alone may not read it, so its file is not linked
      // (authz/resources/uploads.ts); a SUPERADMIN may.
      file: null,
    });
    const superadmin = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
    const linked = await app.inject({
      method: 'POST',
      url: '/api/downloadReports.php',
      headers: { 'x-api-key': superadmin.token },
      payload: { report: 'activatealarm', ...range },
    });
    expect(linked.json().items[0].file).toBe('/api/v2/uploads/activatealarmfiles/x-alarm.csv');
    expect(body.total_commanditems).toBe(15);
    expect(body.commanditems.every((c: { command: string }) => c.command === 'SETALARM')).toBe(true);
    expect(new Set(body.commanditems.map((c: { interface: string }) => c.interface))).toEqual(
      new Set(['S', 'A', 'B']),
    );
    for (const tab of REPORT_TABS) {
      expect(
        (
          await report({
            report: tab.report,
            ...range,
            ...(tab.kind === 'registration' ? { match: 'ALL' } : {}),
          })
        ).statusCode,
      ).toBe(200);
    }
  });

  it('pages large results instead of cutting them', async () => {
    const first = (await report({ report: 'activatealarm', ...range, offset: 0, limit: 10 })).json();
    const second = (await report({ report: 'activatealarm', ...range, offset: 10, limit: 10 })).json();
    expect(first.commanditems).toHaveLength(10);
    expect(second.commanditems).toHaveLength(5);
    expect(first.total_commanditems).toBe(15);
  });

  it('refuses bad ranges with the spec message, and requires the filter on registrations', async () => {
    const reversed = await report({ report: 'deenroll', startdate: '2026-03-10', enddate: '2026-03-01' });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toBe(MESSAGES.endBeforeStart);
    expect((await report({ report: 'registration', ...range })).statusCode).toBe(400);
    expect((await report({ report: 'nope', ...range })).statusCode).toBe(400);
    const empty = (
      await report({ report: 'deenroll', startdate: '2020-01-01', enddate: '2020-01-02' })
    ).json();
    expect(empty.message).toBe(MESSAGES.noResults);
  });

  it('exports xlsx under the spec names with inert text cells and date cells', async () => {
    const get = (query: string) =>
      app.inject({
        method: 'GET',
        url: `/api/v2/reports/export?${query}`,
        headers: { 'x-api-key': session.token },
      });
    const registration = await get('report=registration&startdate=2026-03-01&enddate=2026-03-31&match=NO');
    expect(registration.statusCode).toBe(200);
    expect(registration.headers['content-disposition']).toBe(
      'attachment; filename="Registration_Status_Unmatched-2026-03-01-2026-03-31.xlsx"',
    );
    expect(registration.headers['x-total-rows']).toBe('1');
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.load(registration.rawPayload as unknown as ArrayBuffer);
    const sheet = workbook.worksheets[0];
    expect(sheet?.getRow(1).values).toEqual([
      undefined,
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
    // Text that looks like a formula is a string cell: shown as typed (no apostrophe), never evaluated.
    const brand = sheet?.getRow(2).getCell(7);
    expect(brand?.value).toBe('=HYPERLINK("x")');
    expect(brand?.type).toBe(ExcelJS.ValueType.String);
    expect(brand?.formula).toBeUndefined();
    // The date-time a date cell (REPORT_TIMEZONE, UTC here), formatted as the screen shows it.
    const when = sheet?.getRow(2).getCell(5);
    expect(when?.type).toBe(ExcelJS.ValueType.Date);
    expect(when?.value).toEqual(new Date('2026-03-02T10:00:00.000Z'));
    expect(when?.numFmt).toBe('yyyy-mm-dd hh:mm:ss');
    expect(sheet?.rowCount).toBe(2);

    const commands = await get('report=activatealarm&startdate=2026-03-01&enddate=2026-03-31&part=commands');
    expect(commands.headers['content-disposition']).toContain('filename="report-2026-03-01-2026-03-31.xlsx"');
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(commands.rawPayload as unknown as ArrayBuffer);
    expect(book.worksheets[0]?.rowCount).toBe(16);
    expect(book.worksheets[0]?.getRow(2).getCell(6).value).toBe('ACTIVATE ALARM');

    expect(
      (await get('report=deenroll&startdate=2026-03-01&enddate=2026-03-31')).headers['content-disposition'],
    ).toContain('deenroll_record-2026-03-01-2026-03-31.xlsx');
    expect(
      (await get('report=activatealarm&startdate=2026-03-01&enddate=2026-03-31')).headers[
        'content-disposition'
      ],
    ).toContain('activatealarm-bulkUpload-2026-03-01-2026-03-31.xlsx');
    expect(exportFileName('registration', 'items', 'a', 'b', 'ALL')).toBe('Registration_Status_All-a-b.xlsx');
    expect(exportFileName('registration', 'items', 'a', 'b', 'YES')).toBe(
      'Registration_Status_Matched-a-b.xlsx',
    );
  });

  it("shows a retailer user only that retailer's registrations and devices", async () => {
    await database.db
      .insertInto('registrations')
      .values({
        imei1: '555555555555555',
        imei2: null,
        match_status: 'YES',
        registration_status: 'REGISTERED',
        retailer_phone: '9555555555',
        created_at: '2026-03-03T10:00:00Z',
      })
      .execute();
    const retailer = await loginAs(
      app,
      await buildUser(database, { permissions: ['reports'], retailerPhone: '9555555555' }),
    );
    const body = (
      await app.inject({
        method: 'POST',
        url: '/api/downloadReports.php',
        headers: { 'x-api-key': retailer.token },
        payload: { report: 'registration', ...range, match: 'ALL' },
      })
    ).json();
    expect(body.items.map((r: { imei1: string }) => r.imei1)).toEqual(['555555555555555']);
    const commands = (
      await app.inject({
        method: 'POST',
        url: '/api/downloadReports.php',
        headers: { 'x-api-key': retailer.token },
        payload: { report: 'activatealarm', ...range },
      })
    ).json();
    expect(commands.total_items).toBe(0);
    expect(commands.total_commanditems).toBe(0);
  });

  it('is refused to a USER without the reports permission', async () => {
    const other = await loginAs(app, await buildUser(database));
    const response = await app.inject({
      method: 'POST',
      url: '/api/downloadReports.php',
      headers: { 'x-api-key': other.token },
      payload: { report: 'deenroll', ...range },
    });
    expect(response.statusCode).toBe(403);
  });

  it('exports many rows by keyset paging', async () => {
    await sql`INSERT INTO deenrollments (imei1, action, created_at)
      SELECT lpad(g::text, 15, '9'), 'DEENROLLED', '2026-06-01T00:00:00Z'::timestamptz FROM generate_series(1, 12000) g`.execute(
      database.db,
    );
    const response = await app.inject({
      method: 'GET',
      url: '/api/v2/reports/export?report=deenroll&startdate=2026-06-01&enddate=2026-06-01',
      headers: { 'x-api-key': session.token },
    });
    const book = new ExcelJS.Workbook();
    await book.xlsx.load(response.rawPayload as unknown as ArrayBuffer);
    expect(book.worksheets[0]?.rowCount).toBe(12001);
  });
});
