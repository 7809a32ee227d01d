import { type DeviceRecord, INITIAL_DEVICE_STATE, MESSAGES, settingStandings } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { type ApiCallOptions, type ApiClient, scriptPath } from './client';
import { DEVICE_DETAILS_MAX_IMEIS, deviceKeys, fetchDashboardCharts, fetchDevicesForImeis } from './devices';

const device = (imei1: string): DeviceRecord => ({
  imei1,
  imei2: null,
  claimstatus: 'ENROLLED',
  registrationstatus: 'REGISTERED',
  appversion: '3.2.1',
  apptype: 'DEVICE_OWNER',
  command: null,
  createdat: '2030-01-01T00:00:00.000Z',
  manufacturer: '',
  brand: '',
  model: '',
  retailer: null,
  match_status: 'YES',
  online: true,
  last_seen_at: null,
  state: null,
  desired: INITIAL_DEVICE_STATE,
  standing: settingStandings('ENROLLED', INITIAL_DEVICE_STATE, null),
});

/** A client that answers devicedetails with the devices whose IMEI is in `known`. */
function fakeApi(known: Set<string>) {
  const calls: { script: string; body: unknown }[] = [];
  const call = vi.fn(async (script: string, options: ApiCallOptions<unknown> = {}) => {
    calls.push({ script, body: options.body });
    const imeis = (options.body as { imeis: string[] }).imeis;
    const body = { status: 'success', items: imeis.filter((i) => known.has(i)).map(device) };
    return options.parse ? options.parse(body) : body;
  });
  return { api: { call } as unknown as ApiClient, calls };
}

const imeiAt = (i: number) => String(100000000000000 + i);

describe('fetchDevicesForImeis', () => {
  it('asks in lists of at most 10,000 IMEIs and keeps file order', async () => {
    const imeis = Array.from({ length: 25_000 }, (_, i) => imeiAt(i));
    const { api, calls } = fakeApi(new Set([imeiAt(24_999), imeiAt(3), imeiAt(12_000)]));
    const answer = await fetchDevicesForImeis(api, imeis);
    expect(calls.map((c) => (c.body as { imeis: string[] }).imeis.length)).toEqual([10_000, 10_000, 5_000]);
    expect(DEVICE_DETAILS_MAX_IMEIS).toBe(10_000);
    expect(calls.every((c) => c.script === 'devicedetails')).toBe(true);
    expect(answer.items.map((d) => d.imei1)).toEqual([imeiAt(3), imeiAt(12_000), imeiAt(24_999)]);
    expect(answer.message).toBeUndefined();
    expect(answer.notFound).toHaveLength(25_000 - 3);
    expect(answer.notFound.slice(0, 4)).toEqual([imeiAt(0), imeiAt(1), imeiAt(2), imeiAt(4)]);
  });

  it('asks each IMEI once and lists each device once', async () => {
    const { api, calls } = fakeApi(new Set([imeiAt(1)]));
    const answer = await fetchDevicesForImeis(api, [imeiAt(1), imeiAt(2), imeiAt(1)]);
    expect(calls[0]?.body).toEqual({ imeis: [imeiAt(1), imeiAt(2)] });
    expect(answer.items).toHaveLength(1);
    expect(answer.notFound).toEqual([imeiAt(2)]);
  });

  it('counts an IMEI found as a device’s second IMEI as found', async () => {
    const dual = { ...device(imeiAt(7)), imei2: imeiAt(8) };
    const call = vi.fn(async (_script: string, options: ApiCallOptions<unknown> = {}) => {
      const body = { status: 'success', items: [dual] };
      return options.parse ? options.parse(body) : body;
    });
    const answer = await fetchDevicesForImeis({ call } as unknown as ApiClient, [imeiAt(8), imeiAt(9)]);
    expect(answer.items.map((d) => d.imei1)).toEqual([imeiAt(7)]);
    expect(answer.notFound).toEqual([imeiAt(9)]);
  });

  it("says 'No valid device data found for uploaded IMEIs.' when none is known, and lists them", async () => {
    const { api } = fakeApi(new Set());
    expect(await fetchDevicesForImeis(api, [imeiAt(1), imeiAt(2)])).toEqual({
      items: [],
      notFound: [imeiAt(1), imeiAt(2)],
      message: MESSAGES.noValidDeviceData,
    });
  });
});

describe('v2 calls and keys', () => {
  it('reaches /api/v2/dashboard (v2 calls carry no .php)', async () => {
    const call = vi.fn(async () => ({}));
    await fetchDashboardCharts({ call } as unknown as ApiClient).catch(() => undefined);
    const [script] = call.mock.calls[0] as unknown as [string];
    expect(new URL(`/api/${scriptPath(script)}`, 'http://x').pathname).toBe('/api/v2/dashboard');
    expect(scriptPath('login')).toBe('login.php');
  });

  it('names every parameter in the query keys', () => {
    expect(deviceKeys.details('1')).toEqual(['devices', 'details', { imei: '1' }]);
    expect(deviceKeys.audit('2')).toEqual(['devices', 'audit', { imei: '2' }]);
    expect(deviceKeys.pendingCommands('3')).toEqual(['devices', 'pendingCommands', { imei: '3' }]);
  });
});
