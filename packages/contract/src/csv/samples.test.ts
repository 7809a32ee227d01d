import { describe, expect, it } from 'vitest';
import { localDay, validateNotifyCsv } from './notifyCsv';
import { notificationSampleCsv } from './samples';

describe('the Notify sample file', () => {
  it('passes the validation on the day it is made, each template dated by its rule', async () => {
    for (const today of ['2026-11-28', '2026-12-31', '2028-02-29', localDay()]) {
      const checked = await validateNotifyCsv(notificationSampleCsv(today), { today });
      expect(checked.invalid, today).toEqual([]);
      expect(checked.valid.map((row) => row.template)).toEqual(['Pre', 'Due', 'Post']);
    }
    expect(
      notificationSampleCsv('2026-11-28')
        .split('\n')
        .slice(1, 4)
        .map((l) => l.split(',')[4]),
    ).toEqual(['05/12/2026', '28/11/2026', '21/11/2026']);
  });

  it('is refused a day later: the dates are the point', async () => {
    const checked = await validateNotifyCsv(notificationSampleCsv('2026-11-28'), { today: '2026-11-29' });
    expect(checked.invalid.map((row) => row.error)).toEqual([
      expect.stringContaining('Invalid date for Due (must be today)'),
    ]);
  });
});
