import { describe, expect, it } from 'vitest';
import { formatLocalDateTime } from '../../lib/datetime';
import { AUDIT_LOG_COLUMNS, auditCells, detailText } from './columns';

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

  it('show a row in the column order, the time in the browser’s time zone and empty cells for nulls', () => {
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
      formatLocalDateTime('2030-01-02T23:04:05.678Z'),
      'root@lendlock.com',
      'key.generate',
      'key:3',
      '10.0.0.7',
      'success',
      'Key name: integrator',
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

  it('shows the time in the browser’s zone: 20:00 UTC is the next morning in Kolkata', () => {
    const saved = process.env.TZ;
    try {
      process.env.TZ = 'Asia/Kolkata';
      const row = {
        id: 3,
        at: '2030-01-02T20:00:00.000Z',
        actor: 'root@lendlock.com',
        action: 'login',
        target: null,
        address: null,
        result: 'success',
        details: null,
      };
      expect(auditCells(row)[0]).toBe('2030-01-03 01:30:00');
      expect(auditCells({ ...row, at: 'not a date' })[0]).toBe('');
    } finally {
      if (saved === undefined) delete process.env.TZ;
      else process.env.TZ = saved;
    }
  });

  it('reads the details as labelled fields, not JSON', () => {
    expect(detailText('{"batchId":42,"sessions_ended":3,"reason":"password reset"}')).toBe(
      'Batch id: 42 · Sessions ended: 3 · Reason: password reset',
    );
    expect(detailText('{"from":{"status":"ACTIVE","level":"ADMIN"},"imeis":["1","2"],"note":null}')).toBe(
      'From status: ACTIVE · From level: ADMIN · Imeis: 1, 2 · Note: —',
    );
    // What is not a JSON object stays as the log holds it.
    expect(detailText('plain words')).toBe('plain words');
    expect(detailText('[1,2]')).toBe('[1,2]');
    expect(detailText(null)).toBe('');
  });
});
