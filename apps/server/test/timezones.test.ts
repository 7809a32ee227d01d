/**
 * One time zone the operator sees. Every dated call takes the console's `timeZone`: the days
 * asked for are that zone's whole days (a row at 20:00 UTC on the 9th is on the 10th in Kolkata), the
 * exported date cells show its wall clock, and without a zone the server's REPORT_TIMEZONE (UTC here)
 * applies; a batch upload's dated rows (Notify's Due) are judged on the day of that zone. A zone the server does not know is refused with a clear 400 that changes nothing. The exports'
 * cells are typed: date cells, numbers as numbers, text as string cells.
 */
import { dayInTimeZone, daysInZone, MESSAGES, type Session } from '@lendlock/contract';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';
import { multipart } from './multipart';

const KOLKATA = 'Asia/Kolkata';
const DAY = '2030-03-10';
/** 2030-03-10 01:30 in Kolkata, 2030-03-09 20:00 in UTC. */
const KOLKATA_DAY = '2030-03-09T20:00:00.000Z';
/** 2030-03-10 20:00 in UTC, 2030-03-11 01:30 in Kolkata. */
const UTC_DAY = '2030-03-10T20:00:00.000Z';
const IN_KOLKATA = '356938035643801';
const IN_UTC = '356938035643802';
const ACTION = 'tz.check';

/** A date cell as ExcelJS reads it: a Date whose UTC fields are the wall clock it shows. */
const shown = (wallClock: string) => new Date(`${wallClock.replace(' ', 'T')}.000Z`);

async function seed({ db }: TestDatabase): Promise<void> {
  const registration = (imei1: string, at: string) => ({
    imei1,
    imei2: null,
    match_status: 'YES',
    registration_status: 'REGISTERED',
    brand: '=HYPERLINK("x")',
    model: 'A15',
    created_at: at,
  });
  await db
    .insertInto('registrations')
    .values([registration(IN_KOLKATA, KOLKATA_DAY), registration(IN_UTC, UTC_DAY)])
    .execute();
  await db
    .insertInto('deenrollments')
    .values([
      { imei1: IN_KOLKATA, imei2: null, action: 'DEENROLLED', created_at: KOLKATA_DAY },
      { imei1: IN_UTC, imei2: null, action: 'DEENROLLED', created_at: UTC_DAY },
    ])
    .execute();
  const command = (imei1: string, at: string) => ({
    transaction_id: `tz-${imei1}`,
    imei1,
    command: 'SETALARM' as const,
    kind: 'state' as const,
    state_key: 'alarm',
    interface: 'S' as const,
    status: 'EXECUTED' as const,
    user_label: '@admin',
    created_at: at,
    completed_at: new Date(at),
  });
  await db
    .insertInto('commands')
    .values([command(IN_KOLKATA, KOLKATA_DAY), command(IN_UTC, UTC_DAY)])
    .execute();
  const batch = (name: string, at: string) => ({
    feature: 'activatealarmfiles',
    command: 'SETALARM',
    file_name: name,
    user_label: 'a@lendlock.com',
    status: 'complete' as const,
    created_at: at,
  });
  await db
    .insertInto('batches')
    .values([batch('kolkata.csv', KOLKATA_DAY), batch('utc.csv', UTC_DAY)])
    .execute();
  await db
    .insertInto('audit_log')
    .values([
      { actor: 'system', action: ACTION, target: IN_KOLKATA, result: 'success', at: KOLKATA_DAY },
      { actor: 'system', action: ACTION, target: IN_UTC, result: 'success', at: UTC_DAY },
    ])
    .execute();
}

async function sheetOf(file: Buffer): Promise<ExcelJS.Worksheet> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(file as unknown as ArrayBuffer);
  const sheet = workbook.worksheets[0];
  if (!sheet) throw new Error('no sheet');
  return sheet;
}

describe.each(databaseKinds())('time zones on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let session: Session;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    await seed(database);
    app = await buildTestApp(database);
    session = await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }));
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const post = (url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: { 'x-api-key': session.token }, payload });
  const get = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': session.token } });
  const report = (body: object) =>
    post('/api/downloadReports.php', { startdate: DAY, enddate: DAY, ...body });
  const zone = (timeZone?: string) => (timeZone ? { timeZone } : {});

  it("lists every report in the operator's whole days: 20:00 UTC on the 9th is the 10th in Kolkata", async () => {
    for (const [timeZone, imei] of [
      [KOLKATA, IN_KOLKATA],
      // An alias of the same zone, as some browsers name it.
      ['Asia/Calcutta', IN_KOLKATA],
      [undefined, IN_UTC],
      ['UTC', IN_UTC],
    ] as const) {
      const registrations = (
        await report({ report: 'registration', match: 'ALL', ...zone(timeZone) })
      ).json();
      expect(registrations.items.map((r: { imei1: string }) => r.imei1)).toEqual([imei]);
      const deenroll = (await report({ report: 'deenroll', ...zone(timeZone) })).json();
      expect(deenroll.items.map((r: { imei1: string }) => r.imei1)).toEqual([imei]);
      const alarms = (await report({ report: 'activatealarm', ...zone(timeZone) })).json();
      expect(alarms.commanditems.map((r: { imei1: string }) => r.imei1)).toEqual([imei]);
      expect(alarms.items.map((r: { oldfile: string }) => r.oldfile)).toEqual([
        imei === IN_KOLKATA ? 'kolkata.csv' : 'utc.csv',
      ]);
    }
    // The JSON keeps instants (ISO, UTC): the console shows them in the browser's zone.
    const body = (await report({ report: 'registration', match: 'ALL', timeZone: KOLKATA })).json();
    expect(body.items[0].date_and_time).toBe(KOLKATA_DAY);
  });

  it('exports date cells in the zone asked for, numbers as numbers, text as inert string cells', async () => {
    const registrations = await get(
      `/api/v2/reports/export?report=registration&startdate=${DAY}&enddate=${DAY}&match=ALL&timeZone=${KOLKATA}`,
    );
    expect(registrations.statusCode).toBe(200);
    const sheet = await sheetOf(registrations.rawPayload);
    expect(sheet.rowCount).toBe(2);
    const row = sheet.getRow(2);
    expect(row.getCell(1).value).toBe(IN_KOLKATA);
    expect(row.getCell(5).type).toBe(ExcelJS.ValueType.Date);
    expect(row.getCell(5).value).toEqual(shown('2030-03-10 01:30:00'));
    expect(row.getCell(5).numFmt).toBe('yyyy-mm-dd hh:mm:ss');
    expect(row.getCell(7).type).toBe(ExcelJS.ValueType.String);
    expect(row.getCell(7).value).toBe('=HYPERLINK("x")');

    const commands = await sheetOf(
      (
        await get(
          `/api/v2/reports/export?report=activatealarm&startdate=${DAY}&enddate=${DAY}&part=commands&timeZone=${KOLKATA}`,
        )
      ).rawPayload,
    );
    expect(commands.rowCount).toBe(2);
    const executed = commands.getRow(2);
    expect(executed.getCell(1).type).toBe(ExcelJS.ValueType.Number);
    expect(executed.getCell(2).value).toEqual(shown('2030-03-10 01:30:00'));
    expect(executed.getCell(3).value).toBe(IN_KOLKATA);
    expect(executed.getCell(8).value).toBe('@admin');
    expect(executed.getCell(10).value).toEqual(shown('2030-03-10 01:30:00'));

    const history = await sheetOf(
      (
        await get(
          `/api/v2/reports/export?report=activatealarm&startdate=${DAY}&enddate=${DAY}&timeZone=${KOLKATA}`,
        )
      ).rawPayload,
    );
    expect(history.getRow(2).getCell(1).type).toBe(ExcelJS.ValueType.Number);
    expect(history.getRow(2).getCell(2).value).toEqual(shown('2030-03-10 01:30:00'));
    expect(history.getRow(2).getCell(4).value).toBe('kolkata.csv');

    // Without a zone: REPORT_TIMEZONE's days and wall clock (UTC here).
    const utc = await sheetOf(
      (await get(`/api/v2/reports/export?report=deenroll&startdate=${DAY}&enddate=${DAY}`)).rawPayload,
    );
    expect(utc.getRow(2).getCell(1).value).toBe(IN_UTC);
    expect(utc.getRow(2).getCell(4).value).toEqual(shown('2030-03-10 20:00:00'));
  });

  it("searches and exports the audit log in the operator's days and wall clock", async () => {
    const search = (timeZone?: string) =>
      post('/api/v2/audit/search', { action: ACTION, from: DAY, to: DAY, ...zone(timeZone) });
    expect((await search(KOLKATA)).json().items.map((r: { target: string }) => r.target)).toEqual([
      IN_KOLKATA,
    ]);
    expect((await search()).json().items.map((r: { target: string }) => r.target)).toEqual([IN_UTC]);
    // From alone, and To alone, are the zone's days too.
    const fromOnly = await post('/api/v2/audit/search', { action: ACTION, from: DAY, timeZone: KOLKATA });
    expect(fromOnly.json().items.map((r: { target: string }) => r.target)).toEqual([IN_UTC, IN_KOLKATA]);
    const toOnly = await post('/api/v2/audit/search', {
      action: ACTION,
      to: '2030-03-09',
      timeZone: KOLKATA,
    });
    expect(toOnly.json().total).toBe(0);

    const exported = await get(
      `/api/v2/audit/export?action=${ACTION}&from=${DAY}&to=${DAY}&timeZone=${KOLKATA}`,
    );
    expect(exported.statusCode).toBe(200);
    const sheet = await sheetOf(exported.rawPayload);
    expect(sheet.getRow(1).values).toEqual([
      undefined,
      'Id',
      'When',
      'Who',
      'What',
      'Target',
      'Address',
      'Result',
      'Details',
    ]);
    expect(sheet.rowCount).toBe(2);
    expect(sheet.getRow(2).getCell(1).type).toBe(ExcelJS.ValueType.Number);
    expect(sheet.getRow(2).getCell(2).value).toEqual(shown('2030-03-10 01:30:00'));
    expect(sheet.getRow(2).getCell(5).value).toBe(IN_KOLKATA);
  });

  it("counts the dashboard's today and days in the operator's zone", async () => {
    // One registration just after the start of Kolkata's today, one just before it (Kolkata's yesterday).
    const today = dayInTimeZone(KOLKATA) as string;
    const { start } = daysInZone(today, today, KOLKATA);
    const justAfter = new Date(start.getTime() + 60_000);
    const justBefore = new Date(start.getTime() - 60_000);
    const phone = '9777777777';
    const retailer = await loginAs(
      app,
      await buildUser(database, { userlevel: 'ADMIN', retailerPhone: phone, permissions: ['reports'] }),
    );
    for (const [imei1, at] of [
      ['356938035643811', justAfter],
      ['356938035643812', justBefore],
    ] as const)
      await database.db
        .insertInto('registrations')
        .values({
          imei1,
          imei2: null,
          match_status: 'YES',
          registration_status: 'REGISTERED',
          retailer_phone: phone,
          created_at: at.toISOString(),
        })
        .execute();
    const as = (url: string) => app.inject({ method: 'GET', url, headers: { 'x-api-key': retailer.token } });

    const home = (await as(`/api/homeData.php?timeZone=${KOLKATA}`)).json();
    expect(home.device_today).toBe(1);
    const charts = (await as(`/api/v2/dashboard?timeZone=${KOLKATA}`)).json();
    expect(charts.registrationsPerDay).toHaveLength(30);
    expect(charts.registrationsPerDay.at(-1)).toEqual({ day: today, count: 1 });
    expect(charts.registrationsPerDay.at(-2)?.count).toBe(1);
    expect(charts.registrationsPerDay.reduce((n: number, d: { count: number }) => n + d.count, 0)).toBe(2);

    // Without a zone, UTC's today: whichever of the two falls in it.
    const utcToday = dayInTimeZone('UTC') as string;
    const utc = daysInZone(utcToday, utcToday, 'UTC');
    const inUtcToday = [justAfter, justBefore].filter((t) => t >= utc.start).length;
    expect((await as('/api/homeData.php')).json().device_today).toBe(inUtcToday);
    expect((await as('/api/v2/dashboard')).json().registrationsPerDay.at(-1)).toEqual({
      day: utcToday,
      count: inUtcToday,
    });
  });

  it('refuses a time zone it does not know with a clear 400, and changes nothing', async () => {
    const tables = ['audit_log', 'registrations', 'deenrollments', 'commands', 'batches'];
    const before = await fingerprint(database.db, tables);
    const message = `Invalid timeZone: ${MESSAGES.unknownTimeZone}`;
    for (const timeZone of [
      'Mars/Olympus',
      "UTC'; DROP TABLE registrations; --",
      '+05:30',
      'x'.repeat(65),
      '',
    ]) {
      const q = encodeURIComponent(timeZone);
      const refused = [
        await report({ report: 'registration', match: 'ALL', timeZone }),
        await get(`/api/v2/reports/export?report=deenroll&startdate=${DAY}&enddate=${DAY}&timeZone=${q}`),
        await post('/api/v2/audit/search', { from: DAY, timeZone }),
        await get(`/api/v2/audit/export?from=${DAY}&timeZone=${q}`),
        await get(`/api/v2/auditReport/export?imei1=${IN_KOLKATA}&timeZone=${q}`),
        await get(`/api/homeData.php?timeZone=${q}`),
        await get(`/api/v2/dashboard?timeZone=${q}`),
      ];
      for (const response of refused) {
        expect(response.statusCode, `${timeZone} ${response.body}`).toBe(400);
        if (timeZone.length <= 64 && timeZone !== '') expect(response.json().message).toBe(message);
      }
    }
    // Sent twice: not one zone.
    const twice = await get(`/api/v2/dashboard?timeZone=UTC&timeZone=${KOLKATA}`);
    expect(twice.statusCode).toBe(400);
    expect(await fingerprint(database.db, tables)).toBe(before);
  });
  it('accepts a Notify CSV dated today in Kolkata at 04:57 there (still yesterday in UTC) when the zone is sent', async () => {
    // 2026-11-28 04:57 in Kolkata is 2026-11-27 23:27 in UTC: the browser's day and the server's differ.
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-11-27T23:27:00.000Z') });
    try {
      const imei = '356938035643899';
      const csv = `sno,name,imei1,amount,date,template\r\n1,Asha,${imei},1499.50,28/11/2026,Due\r\n`;
      const send = (fields: Record<string, string>) => {
        const body = multipart(
          { user: session.email, ...fields },
          { name: 'due.csv', type: 'text/csv', content: csv },
        );
        return app.inject({
          method: 'POST',
          url: '/api/bulkNotifyCopy.php',
          headers: { ...body.headers, 'x-api-key': session.token },
          payload: body.payload,
        });
      };
      const batches = async () =>
        Number(
          (
            await database.db
              .selectFrom('batches')
              .select((eb) => eb.fn.countAll().as('n'))
              .where('feature', '=', 'notifyfiles')
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = await batches();
      // Without the zone the server judges its own day (REPORT_TIMEZONE, UTC here): refused, nothing kept.
      const utc = await send({});
      expect(utc.statusCode).toBe(400);
      expect(utc.json().invalid).toEqual([
        expect.objectContaining({ error: expect.stringContaining('Invalid date for Due (must be today)') }),
      ]);
      expect(await batches()).toBe(before);
      // The console sends the browser's zone with every upload: the day the operator sees is the day judged.
      const kolkata = await send({ timeZone: KOLKATA });
      expect(kolkata.statusCode, kolkata.body).toBe(200);
      expect(kolkata.json()).toMatchObject({ status: 'success', total: 1 });
      expect(await batches()).toBe(before + 1);
    } finally {
      vi.useRealTimers();
    }
  });
});
