/**
 * The Notify sample file the console offers (notificationsamplecsv.csv), dated relative to the operator's
 * day so that it passes the product's own validation on the day it is downloaded: a Pre row a week
 * ahead, a Due row today, a Post row a week back.
 */
import { addDays } from '../dates';
import { NOTIFY_CSV_HEADERS } from './notifyCsv';

export const NOTIFICATION_SAMPLE_FILE = 'notificationsamplecsv.csv';

/** YYYY-MM-DD as the Notify CSV writes a date, DD/MM/YYYY. */
const ddMmYyyy = (day: string) => day.split('-').reverse().join('/');

/** The sample for `today` (YYYY-MM-DD, the operator's day). */
export function notificationSampleCsv(today: string): string {
  const rows = [
    ['1', 'Ravi Kumar', '356938035643809', '2500.00', ddMmYyyy(addDays(today, 7)), 'Pre'],
    ['2', 'Anita Sharma', '490154203237518', '1800.50', ddMmYyyy(today), 'Due'],
    ['3', 'Mohan Das', '353918054478912', '3200', ddMmYyyy(addDays(today, -7)), 'Post'],
  ];
  return `${[NOTIFY_CSV_HEADERS.join(','), ...rows.map((row) => row.join(','))].join('\n')}\n`;
}
