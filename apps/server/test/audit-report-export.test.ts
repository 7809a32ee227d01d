/**
 * The Audit Report By IMEI's xlsx download (`GET /api/v2/auditReport/export`), written by the server's own
 * xlsx writer: the file read back by ExcelJS sheet by sheet (names, headers, rows, date cells in the time
 * zone asked for, S.No. as numbers, formula-looking text an inert string cell), the spec's file name, the
 * report's permission and a retailer's scope, the audit row of each download, and clear refusals that
 * change nothing.
 */
import { MESSAGES, type Session } from '@lendlock/contract';
import ExcelJS from 'exceljs';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachment } from '../src/lib/attachment';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

const IMEI = '356938035643809';
const IMEI2 = '490154203237518';
const RETAILER = '9333333333';
const AT = '2030-06-15T10:20:30.000Z';
const LATER = '2030-06-16T20:45:00.000Z';
/**
 * A date cell as ExcelJS reads it: a Date whose UTC fields are the wall clock the cell shows
 * (`YYYY-MM-DD HH:mm:ss`).
 */
const shown = (wallClock: string) => new Date(`${wallClock.replace(' ', 'T')}.000Z`);

async function seed({ db }: TestDatabase): Promise<void> {
  await db
    .insertInto('devices')
    .values({
      imei1: IMEI,
      imei2: IMEI2,
      manufacturer: 'Samsung Electronics',
      brand: 'Samsung',
      model: 'Galaxy A15',
      retailer_phone: RETAILER,
      match_status: 'YES',
      registered_at: AT,
    })
    .execute();
  await db
    .insertInto('registrations')
    .values({
      imei1: IMEI,
      imei2: IMEI2,
      match_status: 'YES',
      registration_status: 'REGISTERED',
      manufacturer: 'Samsung Electronics',
      brand: 'Samsung',
      model: 'Galaxy A15',
      retailer_phone: RETAILER,
      created_at: AT,
    })
    .execute();
  await db
    .insertInto('releases')
    .values({
      imei1: IMEI,
      imei2: IMEI2,
      released_by: 'root@lendlock.com',
      transaction_id: null,
      created_at: LATER,
    })
    .execute();
  await db
    .insertInto('deenrollments')
    .values({ imei1: IMEI, imei2: IMEI2, action: 'DEENROLLED', created_at: LATER })
    .execute();
  await db
    .insertInto('commands')
    .values([
      {
        transaction_id: 'tx-alarm',
        imei1: IMEI,
        command: 'SETALARM',
        kind: 'state',
        state_key: 'alarm',
        interface: 'B',
        status: 'EXECUTED',
        user_label: '=HYPERLINK("x")',
        created_at: AT,
        completed_at: new Date(AT),
      },
      {
        transaction_id: 'tx-grey',
        imei1: IMEI,
        command: 'GREYAPP',
        kind: 'state',
        state_key: 'grey',
        interface: 'S',
        status: 'SENT',
        user_label: 'admin@lendlock.com',
        options: JSON.stringify({ level: 'level1' }),
        created_at: LATER,
      },
    ])
    .execute();
}

/** Every sheet of the file as ExcelJS reads it: its name and its rows' values. */
async function sheetsOf(file: Buffer): Promise<{ name: string; rows: unknown[][] }[]> {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.load(file as unknown as ArrayBuffer);
  return workbook.worksheets.map((sheet) => {
    const rows: unknown[][] = [];
    sheet.eachRow((row) => rows.push((row.values as unknown[]).slice(1)));
    return { name: sheet.name, rows };
  });
}

describe.each(databaseKinds())('the Audit Report download on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let admin: Session & { email: string };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    await seed(database);
    app = await buildTestApp(database);
    const user = await buildUser(database, { userlevel: 'ADMIN' });
    admin = { ...(await loginAs(app, user)), email: user.email };
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  const download = (token: string, query: string) =>
    app.inject({
      method: 'GET',
      url: `/api/v2/auditReport/export?${query}`,
      headers: { 'x-api-key': token },
    });
  const exportsAudited = async () =>
    database.db
      .selectFrom('audit_log')
      .select(['actor', 'target', 'result', 'details'])
      .where('action', '=', 'auditReport.export')
      .orderBy('id')
      .execute();

  it('writes one sheet per section, in the time zone asked for, under the spec name', async () => {
    const response = await download(admin.token, `imei1=${IMEI}&timeZone=Asia/Kolkata`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(response.headers['content-disposition']).toBe(
      `attachment; filename="AuditReport_Samsung_imei-${IMEI}.xlsx"`,
    );
    expect(await sheetsOf(response.rawPayload)).toEqual([
      {
        name: 'Registration Details',
        rows: [
          [
            'IMEI 1',
            'IMEI 2',
            'Match Status',
            'Registration Status',
            'Date and Time',
            'Manufacturer',
            'Brand',
            'Model',
            'Last Command',
          ],
          // No command has reached the device's record (last_command): the cell stays empty.
          [
            IMEI,
            IMEI2,
            'YES',
            'REGISTERED',
            shown('2030-06-15 15:50:30'),
            'Samsung Electronics',
            'Samsung',
            'Galaxy A15',
          ],
        ],
      },
      {
        name: 'Released Details',
        rows: [
          ['IMEI 1', 'IMEI 2', 'Released By', 'Transaction Id', 'Created At'],
          [IMEI, IMEI2, 'root@lendlock.com', undefined, shown('2030-06-17 02:15:00')],
        ],
      },
      {
        name: 'De-enroll & Re-registration',
        rows: [
          ['IMEI 1', 'IMEI 2', 'Action', 'Created At'],
          [IMEI, IMEI2, 'DEENROLLED', shown('2030-06-17 02:15:00')],
        ],
      },
      {
        name: 'Executed Commands',
        rows: [
          [
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
          ],
          [
            1,
            shown('2030-06-17 02:15:00'),
            IMEI,
            'tx-grey',
            'S',
            'DISABLE APP',
            'level1',
            'SENT',
            'admin@lendlock.com',
            shown('2030-06-17 02:15:00'),
          ],
          [
            2,
            shown('2030-06-15 15:50:30'),
            IMEI,
            'tx-alarm',
            'B',
            'ACTIVATE ALARM',
            undefined,
            'EXECUTED',
            // Text a spreadsheet would run as a formula is a string cell, shown as typed, never run.
            '=HYPERLINK("x")',
            shown('2030-06-15 15:50:30'),
          ],
        ],
      },
    ]);
    const audited = await exportsAudited();
    expect(audited.at(-1)).toMatchObject({ actor: admin.email, target: IMEI, result: 'success' });
    expect(audited.at(-1)?.details).toEqual({
      registration: 1,
      release: 1,
      deenroll: 1,
      commands: 2,
    });
  });

  it("formats date-times in the server's REPORT_TIMEZONE when no time zone is sent (UTC here)", async () => {
    const response = await download(admin.token, `imei1=${IMEI2}`);
    expect(response.statusCode).toBe(200);
    const [registration] = await sheetsOf(response.rawPayload);
    expect(registration?.rows[1]?.[4]).toEqual(shown('2030-06-15 10:20:30'));
  });

  it('needs the Audit Report permission, and shows a retailer only its own devices', async () => {
    const before = (await exportsAudited()).length;
    const plain = await loginAs(app, await buildUser(database));
    const refused = await download(plain.token, `imei1=${IMEI}`);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toBe(MESSAGES.unauthorised);

    const other = await loginAs(
      app,
      await buildUser(database, { permissions: ['auditReport'], retailerPhone: '9444444444' }),
    );
    const hidden = await download(other.token, `imei1=${IMEI}`);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json().message).toBe(MESSAGES.auditEmpty);
    expect((await exportsAudited()).length).toBe(before);

    const theirs = await loginAs(
      app,
      await buildUser(database, { permissions: ['auditReport'], retailerPhone: RETAILER }),
    );
    const allowed = await download(theirs.token, `imei1=${IMEI}`);
    expect(allowed.statusCode).toBe(200);
    expect((await exportsAudited()).length).toBe(before + 1);
  });

  it('refuses a malformed IMEI or time zone, and answers an unknown device as the screen does', async () => {
    const before = (await exportsAudited()).length;
    const short = await download(admin.token, 'imei1=12345');
    expect(short.statusCode).toBe(400);
    expect(short.json().message).toContain('Please provide a 15 digit IMEI number');
    const zone = await download(admin.token, `imei1=${IMEI}&timeZone=Mars/Olympus`);
    expect(zone.statusCode).toBe(400);
    expect(zone.json().message).toBe(`Invalid timeZone: ${MESSAGES.unknownTimeZone}`);
    const unknown = await download(admin.token, 'imei1=111111111111111');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe(MESSAGES.auditEmpty);
    expect((await exportsAudited()).length).toBe(before);
  });
});

describe('the download name', () => {
  it('is sent as is when plain ASCII, else beside an ASCII stand-in as RFC 6266 says', () => {
    expect(attachment(`AuditReport_Samsung_imei-${IMEI}.xlsx`)).toBe(
      `attachment; filename="AuditReport_Samsung_imei-${IMEI}.xlsx"`,
    );
    // A brand is data a device reported: a header must never carry it raw.
    expect(attachment(`AuditReport_Xiaomi™-Рэдми_imei-${IMEI}.xlsx`)).toBe(
      `attachment; filename="AuditReport_Xiaomi_-______imei-${IMEI}.xlsx"; ` +
        `filename*=UTF-8''AuditReport_Xiaomi%E2%84%A2-%D0%A0%D1%8D%D0%B4%D0%BC%D0%B8_imei-${IMEI}.xlsx`,
    );
  });
});
