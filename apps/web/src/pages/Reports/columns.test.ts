import type { BulkHistoryRow, ExecutedCommandRow, RegistrationRow } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import {
  BULK_HISTORY_COLUMNS,
  BULK_HISTORY_FILE_COLUMN,
  bulkHistoryCells,
  COMMAND_COLUMNS,
  COMMAND_INTERFACE_COLUMN,
  commandCells,
  REGISTRATION_COLUMNS,
  registrationCells,
  uploadedFileName,
} from './columns';
import { REPORT_LABELS } from './labels';

const command = (raw: string, iface: 'S' | 'A' | 'B'): ExecutedCommandRow => ({
  id: 1,
  date_and_time: '2030-01-01T00:00:00.000Z',
  imei1: '350000000000001',
  transactionId: 't1',
  interface: iface,
  command: raw,
  status: 'EXECUTED',
  user: 'admin@lendlock.com',
  commandType: 'level2',
  createdat: '2030-01-01T00:00:00.000Z',
});

describe('executed command rows', () => {
  it('show renamed commands by their display names and other commands unchanged', () => {
    const shown = (raw: string) =>
      commandCells(command(raw, 'S'))[COMMAND_COLUMNS.findIndex((c) => c.title === REPORT_LABELS.command)];
    expect(shown('LOCKWALLPAPER')).toBe('SET WALLPAPER');
    expect(shown('UNLOCKWALLPAPER')).toBe('REMOVE WALLPAPER');
    expect(shown('SETALARM')).toBe('ACTIVATE ALARM');
    expect(shown('UNSETALARM')).toBe('DEACTIVATE ALARM');
    expect(shown('GREYAPP')).toBe('DISABLE APP');
    expect(shown('UNGREYAPP')).toBe('RESTORE APP');
    expect(shown('RELEASE')).toBe('RELEASE');
    expect(shown('DISABLECAMERA')).toBe('DISABLECAMERA');
  });

  it('show the interface S, A or B', () => {
    expect(COMMAND_COLUMNS[COMMAND_INTERFACE_COLUMN]?.title).toBe(REPORT_LABELS.interface);
    for (const iface of ['S', 'A', 'B'] as const)
      expect(commandCells(command('LOCK', iface))[COMMAND_INTERFACE_COLUMN]).toBe(iface);
    const cells = commandCells(command('GREYAPP', 'B'));
    expect(cells).toHaveLength(COMMAND_COLUMNS.length);
    expect(cells).toContain('level2');
    expect(cells).toContain('t1');
  });
});

describe('registration and history rows', () => {
  it('a registration row has a cell per column, the last command by its display name', () => {
    const row: RegistrationRow = {
      imei1: '350000000000001',
      imei2: null,
      Match_Status: 'YES',
      Registration_status: 'REGISTERED',
      date_and_time: '2030-01-01T00:00:00.000Z',
      Manufacturer: 'Xiaomi',
      Model: '13C',
      brand: 'Redmi',
      model: '13C',
      command: 'SETALARM',
      createdat: '2030-01-01T00:00:00.000Z',
    };
    const cells = registrationCells(row);
    expect(cells).toHaveLength(REGISTRATION_COLUMNS.length);
    expect(cells.slice(0, 4)).toEqual(['350000000000001', '', 'YES', 'REGISTERED']);
    expect(cells.at(-1)).toBe('ACTIVATE ALARM');
  });

  it('a history row links its file under the name it was uploaded with', () => {
    const row: BulkHistoryRow = {
      id: 3,
      date_and_time: '2030-01-01T00:00:00.000Z',
      file: '/api/v2/uploads/setWallpaperfiles/2030-01-01T00-00-00-000Z-wallpaper.csv',
      oldfile: 'wallpaper.csv',
      isComplete: 'complete',
      lastimei: '350000000000009',
      remarks: 'processed 2: found 2, not found 0',
    };
    expect(BULK_HISTORY_COLUMNS[BULK_HISTORY_FILE_COLUMN]?.title).toBe(REPORT_LABELS.file);
    expect(bulkHistoryCells(row)[BULK_HISTORY_FILE_COLUMN]).toBe('wallpaper.csv');
    expect(uploadedFileName({ ...row, oldfile: null })).toBe('2030-01-01T00-00-00-000Z-wallpaper.csv');
    expect(bulkHistoryCells(row).slice(2)).toEqual([
      'complete',
      '350000000000009',
      'processed 2: found 2, not found 0',
    ]);
  });
});
