import {
  type AuditResponse,
  auditBrand,
  auditFileName,
  type ExecutedCommandRow,
  isAuditEmpty,
} from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { formatLocalDateTime } from '../../../lib/datetime';
import { screenTables as auditTables, hasPendingCommands } from './auditReport';

const IMEI = '356938035643809';
const AT = '2030-06-15T10:20:30.000Z';

const command = (overrides: Partial<ExecutedCommandRow>): ExecutedCommandRow => ({
  id: 1,
  date_and_time: AT,
  imei1: IMEI,
  transactionId: 'tx-1',
  interface: 'S',
  command: 'LOCK',
  status: 'EXECUTED',
  user: 'admin@lendlock.com',
  commandType: '',
  createdat: AT,
  ...overrides,
});

const audit: AuditResponse = {
  status: 'success',
  registration: [
    {
      imei1: IMEI,
      imei2: null,
      Match_Status: 'YES',
      Registration_status: 'REGISTERED',
      date_and_time: AT,
      Manufacturer: 'Samsung Electronics',
      Model: 'Galaxy A15',
      brand: 'Samsung',
      model: 'Galaxy A15',
      command: 'LOCKWALLPAPER',
      createdat: AT,
    },
  ],
  release: [
    { imei1: IMEI, imei2: '490154203237518', user: 'root@lendlock.com', transactionId: null, createdat: AT },
  ],
  commands: [
    command({ id: 2, transactionId: 'tx-2', command: 'GREYAPP', commandType: 'level1', status: 'SENT' }),
    command({ id: 1, command: 'SETALARM', interface: 'B' }),
  ],
  deenroll: [{ imei1: IMEI, imei2: null, action: 'DEENROLL', createdat: AT }],
};

describe('the report on the screen (the contract’s auditTables in local time)', () => {
  it('has the four sections in order: registration, released, de-enroll, commands', () => {
    expect(auditTables(audit).map((t) => t.title)).toEqual([
      'Registration Details',
      'Released Details',
      'De-enroll / Re-registration Details',
      'Executed Commands',
    ]);
  });

  it('shows executed commands under their display names, numbered, with status and interface', () => {
    const commands = auditTables(audit)[3];
    expect(commands?.header).toEqual([
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
    ]);
    const when = formatLocalDateTime(AT);
    expect(commands?.rows).toEqual([
      ['1', when, IMEI, 'tx-2', 'S', 'DISABLE APP', 'level1', 'SENT', 'admin@lendlock.com', when],
      ['2', when, IMEI, 'tx-1', 'B', 'ACTIVATE ALARM', '', 'EXECUTED', 'admin@lendlock.com', when],
    ]);
  });

  it('shows the registration with its last command mapped, and empty text for missing values', () => {
    const [registration, release, deenroll] = auditTables(audit);
    expect(registration?.rows[0]).toEqual([
      IMEI,
      '',
      'YES',
      'REGISTERED',
      formatLocalDateTime(AT),
      'Samsung Electronics',
      'Samsung',
      'Galaxy A15',
      'SET WALLPAPER',
    ]);
    expect(release?.rows[0]).toEqual([
      IMEI,
      '490154203237518',
      'root@lendlock.com',
      '',
      formatLocalDateTime(AT),
    ]);
    expect(deenroll?.rows[0]).toEqual([IMEI, '', 'DEENROLL', formatLocalDateTime(AT)]);
  });

  it('names every sheet validly for a workbook (≤ 31 characters, no : \\ / ? * [ ])', () => {
    for (const table of auditTables(audit)) {
      expect(table.sheet.length).toBeLessThanOrEqual(31);
      expect(table.sheet).not.toMatch(/[:\\/?*[\]]/);
    }
  });
});

describe('file name and refresh', () => {
  it('names the file AuditReport_{brand}_imei-{imei}.xlsx', () => {
    expect(auditFileName(auditBrand(audit), IMEI)).toBe(`AuditReport_Samsung_imei-${IMEI}.xlsx`);
  });

  it('keeps a brand safe in a file name and falls back when there is none', () => {
    const withBrand = (brand: string) =>
      ({ registration: [{ ...audit.registration[0], brand }] }) as AuditResponse;
    expect(auditBrand(withBrand('Xiaomi / Redmi'))).toBe('Xiaomi-Redmi');
    expect(auditBrand(withBrand('  '))).toBe('Unknown');
    expect(auditBrand({ ...audit, registration: [] })).toBe('Unknown');
  });

  it('refreshes only while a command awaits its device', () => {
    expect(hasPendingCommands(audit.commands)).toBe(true);
    expect(hasPendingCommands([command({ status: 'EXECUTED' }), command({ status: 'CANCELLED' })])).toBe(
      false,
    );
    expect(hasPendingCommands([])).toBe(false);
    expect(hasPendingCommands(undefined)).toBe(false);
  });

  it('is empty only with no row in any section', () => {
    expect(isAuditEmpty(audit)).toBe(false);
    expect(isAuditEmpty({ registration: [], release: [], commands: [], deenroll: [] })).toBe(true);
    expect(isAuditEmpty({ registration: [], release: audit.release, commands: [], deenroll: [] })).toBe(
      false,
    );
  });
});
