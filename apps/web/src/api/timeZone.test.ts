import { afterEach, describe, expect, it, vi } from 'vitest';
import { fileApi } from '../test/fakeApi';
import { type ApiCallOptions, type ApiClient, scriptPath } from './client';
import { exportAuditReport, fetchDashboardCharts, fetchHomeData } from './devices';
import { browserTimeZone, withTimeZone } from './timeZone';

afterEach(() => {
  vi.restoreAllMocks();
});

/** Makes the browser report `zone` as its time zone. */
function inZone(zone: string | undefined) {
  const real = Intl.DateTimeFormat.prototype.resolvedOptions;
  vi.spyOn(Intl.DateTimeFormat.prototype, 'resolvedOptions').mockImplementation(function (
    this: Intl.DateTimeFormat,
  ) {
    return { ...real.call(this), timeZone: zone as string };
  });
}

describe("the console's time zone on dated calls", () => {
  it("is the browser's IANA zone, added to the fields of a call", () => {
    inZone('Asia/Kolkata');
    expect(browserTimeZone()).toBe('Asia/Kolkata');
    expect(withTimeZone({ from: '2030-01-01' })).toEqual({ from: '2030-01-01', timeZone: 'Asia/Kolkata' });
  });

  it('is left out when the browser cannot tell (the server then uses REPORT_TIMEZONE)', () => {
    inZone(undefined);
    expect(browserTimeZone()).toBeUndefined();
    expect(withTimeZone({ from: '2030-01-01' })).toEqual({ from: '2030-01-01' });
  });

  it('goes with the dashboard calls, after the .php of a spec call', async () => {
    inZone('Asia/Kolkata');
    const scripts: string[] = [];
    const api = {
      async call(script: string, _options: ApiCallOptions<unknown>) {
        scripts.push(script);
        throw new Error('not answered');
      },
    } as unknown as ApiClient;
    await fetchHomeData(api).catch(() => undefined);
    await fetchDashboardCharts(api).catch(() => undefined);
    expect(scripts.map(scriptPath)).toEqual([
      'homeData.php?timeZone=Asia%2FKolkata',
      'v2/dashboard?timeZone=Asia%2FKolkata',
    ]);
    expect(scriptPath('homeData')).toBe('homeData.php');
  });

  it('goes with the Audit Report download', async () => {
    inZone('Asia/Kolkata');
    const { api, requests } = fileApi(new Response('PK'));
    await exportAuditReport(api, { imei: '356938035643809', fallbackName: 'a.xlsx' });
    expect(requests[0]?.url).toBe(
      'http://console.test/api/v2/auditReport/export?imei1=356938035643809&timeZone=Asia%2FKolkata',
    );
  });
});
