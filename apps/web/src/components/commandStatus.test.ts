import { COMMAND_STATUSES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { isPendingStatus, statusColor, statusLabel } from './commandStatus';

describe('command status display', () => {
  it('is pending while the device has not acknowledged (QUEUED, SENT, DELIVERED)', () => {
    expect(COMMAND_STATUSES.filter(isPendingStatus)).toEqual(['QUEUED', 'SENT', 'DELIVERED']);
  });

  it('colours executed green, failed red, pending (DELIVERED too) yellow and the closed ones grey', () => {
    expect(Object.fromEntries(COMMAND_STATUSES.map((s) => [s, statusColor(s)]))).toEqual({
      QUEUED: 'yellow',
      SENT: 'yellow',
      DELIVERED: 'yellow',
      EXECUTED: 'green',
      FAILED: 'red',
      SUPERSEDED: 'gray',
      CANCELLED: 'gray',
      EXPIRED: 'gray',
    });
  });

  it.each([
    ['QUEUED', 'pending'],
    ['SENT', 'pending'],
    ['DELIVERED', 'delivered'],
    ['EXECUTED', 'executed'],
    ['FAILED', 'failed'],
    ['SUPERSEDED', 'superseded'],
    ['CANCELLED', 'cancelled'],
    ['EXPIRED', 'expired'],
  ])('the live badge reads %s as %s', (status, text) => expect(statusLabel(status)).toBe(text));
});
