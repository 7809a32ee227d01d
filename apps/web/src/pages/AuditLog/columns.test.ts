import { describe, expect, it } from 'vitest';
import { AUDIT_LOG_COLUMNS, auditCells, formatUtcDateTime } from './columns';

describe('audit log columns', () => {
  it('are When, Who, What, Target, Address, Result and Details', () => {
    expect(AUDIT_LOG_COLUMNS.map((column) => column.title)).toEqual([
      'When',
      'Who',
      'What',
      'Target',
      'Address',
      'Result',
      'Details',
    ]);
  });

  it('show a row in the column order, the time in UTC and empty cells for nulls', () => {
    expect(
      auditCells({
        id: 1,
        at: '2030-01-02T23:04:05.678Z',
        actor: 'root@lendlock.com',
        action: 'key.generate',
        target: 'key:3',
        address: '10.0.0.7',
        result: 'success',
        details: '{"keyName":"integrator"}',
      }),
    ).toEqual([
      '2030-01-02 23:04:05',
      'root@lendlock.com',
      'key.generate',
      'key:3',
      '10.0.0.7',
      'success',
      '{"keyName":"integrator"}',
    ]);
    const cells = auditCells({
      id: 2,
      at: '2030-01-02T00:00:00.000Z',
      actor: 'system',
      action: 'bootstrap',
      target: null,
      address: null,
      result: 'success',
      details: null,
    });
    expect(cells).toHaveLength(AUDIT_LOG_COLUMNS.length);
    expect([cells[3], cells[4], cells[6]]).toEqual(['', '', '']);
  });

  it('an unreadable time is an empty cell', () => {
    expect(formatUtcDateTime('not a date')).toBe('');
  });
});
