/**
 * Operators' uploads on the server: a Notify batch follows the single form's date rule against
 * the operator's day (the console's time zone, else REPORT_TIMEZONE); a semicolon-separated or UTF-16
 * upload is told so; and the spec's `setwallpaper` action is accepted by locknotification.php,
 * getimeidetails.php and updateCommandOnServer.php. A refused upload leaves no batch behind.
 */
import { CSV_FORMAT_MESSAGES, dayInTimeZone, MESSAGES, NOTIFY_DATE_RULES } from '@lendlock/contract';
import { sql } from 'kysely';
import { describe, expect, it, vi } from 'vitest';
import { deviceSuite, simulatedDevice } from './devices';
import { multipart } from './multipart';

const HEADER = 'sno,name,imei1,amount,date,template';
/** YYYY-MM-DD → DD/MM/YYYY. */
const ddmmyyyy = (day: string) => day.split('-').reverse().join('/');
/** The day `days` after `day` (YYYY-MM-DD). */
const plusDays = (day: string, days: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);

describe('operators: Notify dates, CSV formats and setwallpaper', () => {
  // REPORT_TIMEZONE UTC; the zones below are 25 hours apart, so their days always differ.
  const suite = deviceSuite('pglite', { batchWorkers: 1, reportTimeZone: 'UTC' });

  const upload = (script: string, content: string | Buffer, fields: Record<string, string> = {}) => {
    const body = multipart(
      { user: suite.admin.email, ...fields },
      { name: 'reminders.csv', type: 'text/csv', content },
    );
    return suite.server.app.inject({
      method: 'POST',
      url: `/api/${script}.php`,
      headers: { ...body.headers, 'x-api-key': suite.admin.token },
      payload: body.payload,
    });
  };
  const batchCount = async () =>
    (await sql<{ n: number }>`SELECT count(*)::int AS n FROM batches`.execute(suite.database.db)).rows[0]?.n;
  const call = (method: 'POST' | 'PUT', url: string, payload: object) =>
    suite.server.app.inject({
      method,
      url: `/api/${url}`,
      headers: { 'x-api-key': suite.admin.token },
      payload,
    });

  it("refuses a past Pre row, a future Post row and a Due row not dated the operator's day", async () => {
    const zone = 'Pacific/Kiritimati'; // UTC+14
    const today = dayInTimeZone(zone) as string;
    const rows = [
      `1,Asha,490154203237518,100,${ddmmyyyy(plusDays(today, -1))},Pre`,
      `2,Ravi,490154203237526,100,${ddmmyyyy(plusDays(today, 1))},Post`,
      `3,Mina,490154203237534,100,${ddmmyyyy(plusDays(today, 1))},Due`,
      `4,Arun,490154203237542,100,${ddmmyyyy(today)},Due`,
    ];
    const before = await batchCount();
    const response = await upload('bulkNotifyCopy', [HEADER, ...rows, ''].join('\n'), { timeZone: zone });
    expect(response.statusCode).toBe(400);
    const body = response.json();
    expect(body.message).toBe(MESSAGES.csvIncorrect);
    expect(body.invalid.map((r: { line: number; error: string }) => [r.line, r.error])).toEqual([
      [2, `Incorrect fields: ${NOTIFY_DATE_RULES.Pre}`],
      [3, `Incorrect fields: ${NOTIFY_DATE_RULES.Post}`],
      [4, `Incorrect fields: ${NOTIFY_DATE_RULES.Due}`],
    ]);
    expect(await batchCount()).toBe(before);
  });

  it("takes today in the console's time zone, else in REPORT_TIMEZONE", async () => {
    const east = dayInTimeZone('Pacific/Kiritimati') as string; // UTC+14
    const west = dayInTimeZone('Pacific/Pago_Pago') as string; // UTC-11
    expect(east).not.toBe(west);
    const due = (day: string) => `${HEADER}\n1,Asha,490154203237518,100,${ddmmyyyy(day)},Due\n`;
    const accepted = await upload('bulkNotifyCopy', due(west), { timeZone: 'Pacific/Pago_Pago' });
    expect(accepted.statusCode).toBe(200);
    expect(accepted.json().total).toBe(1);
    await call('POST', 'v2/batch/cancel', { batchId: accepted.json().batchId });
    const refused = await upload('bulkNotifyCopy', due(west), { timeZone: 'Pacific/Kiritimati' });
    expect(refused.json().invalid[0].error).toBe(`Incorrect fields: ${NOTIFY_DATE_RULES.Due}`);
    // No zone, or one Intl does not know: REPORT_TIMEZONE's day (UTC here).
    const utc = dayInTimeZone('UTC') as string;
    for (const fields of [{}, { timeZone: 'Mars/Olympus_Mons' }] as Record<string, string>[]) {
      const other = utc === east ? west : east;
      const response = await upload('bulkNotifyCopy', due(other), fields);
      expect(response.json().invalid[0].error).toBe(`Incorrect fields: ${NOTIFY_DATE_RULES.Due}`);
    }
  });

  it('names the separator or the encoding of a file that is not comma-separated UTF-8', async () => {
    const before = await batchCount();
    const semicolons = await upload('bulkLockCopy', 'Sno;IMEI1\n1;490154203237518\n');
    expect(semicolons.statusCode).toBe(400);
    expect(semicolons.json().invalid).toEqual([
      { line: 1, error: CSV_FORMAT_MESSAGES.semicolons, data: MESSAGES.headersNotMatched },
    ]);
    const utf16 = await upload(
      'bulkLockCopy',
      Buffer.from('\uFEFFSno,IMEI1\r\n1,490154203237518\r\n', 'utf16le'),
    );
    expect(utf16.statusCode).toBe(400);
    expect(utf16.json().invalid[0].error).toBe(CSV_FORMAT_MESSAGES.utf16);
    expect(await batchCount()).toBe(before);
  });

  it("accepts the spec's setwallpaper action on locknotification, getimeidetails and updateCommandOnServer", async () => {
    const device = simulatedDevice(suite.server);
    suite.devices.push(device);
    await device.register();
    await device.connect();
    const single = await call('POST', 'locknotification.php', {
      imei: device.imei,
      action: 'setwallpaper',
      user: suite.admin.email,
    });
    expect(single.statusCode).toBe(200);
    expect(single.json()).toMatchObject({
      status: 'success',
      message: 'Set Wallpaper initiated successfully.',
    });
    await vi.waitFor(() => expect(device.received.at(-1)?.command).toBe('LOCKWALLPAPER'), {
      timeout: 10_000,
    });
    await vi.waitFor(() => expect(device.state.wallpaper).toBe(true), { timeout: 10_000 });

    const details = await call('POST', 'getimeidetails.php', {
      imei: device.imei,
      action: 'setwallpaper',
      filename: 'wallpapers.csv',
      user: suite.admin.email,
    });
    expect(details.statusCode).toBe(200);
    expect(details.json()).toEqual({ message: 'found' });

    const list = await call('PUT', 'updateCommandOnServer.php', {
      imeilist: `${device.imei},${device.imei}`,
      action: 'setwallpaper',
      user: suite.admin.email,
    });
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ status: 'success', message: '2 IMEIs recorded' });

    const rows = await suite.database.db
      .selectFrom('commands')
      .select(['command', 'interface'])
      .where('imei1', '=', device.imei)
      .orderBy('id')
      .execute();
    expect(rows.slice(0, 2)).toEqual([
      { command: 'LOCKWALLPAPER', interface: 'S' },
      { command: 'LOCKWALLPAPER', interface: 'B' },
    ]);
    const unknown = await call('POST', 'locknotification.php', { imei: device.imei, action: 'paintwall' });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().message).toBe('Unknown action: paintwall');
  });
});
