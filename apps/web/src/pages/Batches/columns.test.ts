import type { BatchListItem } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { formatLocalDateTime } from '../../lib/datetime';
import { BATCH_LIST_COLUMNS, batchCells, batchCommandText } from './columns';
import { BATCHES_LABELS as L } from './labels';

const batch = (overrides: Partial<BatchListItem> = {}): BatchListItem => ({
  batchId: 12,
  statusOf: 'disableappfiles',
  command: 'GREYAPP',
  batchfilename: 'greys.csv',
  isComplete: 'complete',
  phase: 'complete',
  lastimei: '356938035643809',
  total: 5,
  valid: 5,
  invalid: 0,
  found: 3,
  notFound: 2,
  processed: 5,
  createdAt: '2030-01-02T03:04:05.000Z',
  startedAt: '2030-01-02T03:04:06.000Z',
  completedAt: '2030-01-02T03:05:00.000Z',
  elapsedMs: 54_000,
  pausedReason: null,
  owner: 'agent@lendlock.com',
  interface: 'B',
  ...overrides,
});

describe('the Batches list', () => {
  it('a batch reads: id, command, file, owner, counts, phase and local times', () => {
    expect(batchCells(batch())).toEqual([
      '12',
      'Disable App',
      'greys.csv',
      'agent@lendlock.com',
      '5',
      '3',
      '2',
      '5',
      L.phases.complete,
      formatLocalDateTime('2030-01-02T03:04:05.000Z'),
      formatLocalDateTime('2030-01-02T03:04:06.000Z'),
      formatLocalDateTime('2030-01-02T03:05:00.000Z'),
    ]);
    expect(batchCells(batch())).toHaveLength(BATCH_LIST_COLUMNS.length);
  });

  it('a batch not started or not finished leaves its times empty; one without a file says so', () => {
    const cells = batchCells(
      batch({ phase: 'running', startedAt: null, completedAt: null, batchfilename: null }),
    );
    expect(cells.slice(-3)).toEqual([formatLocalDateTime('2030-01-02T03:04:05.000Z'), '', '']);
    expect(cells[2]).toBe(L.noFile);
    expect(cells[8]).toBe(L.phases.running);
  });

  it('names a device action to ALL, and a command without a screen by its raw name', () => {
    expect(batchCommandText({ statusOf: 'deviceaction', command: 'REBOOT' })).toBe('Device Action REBOOT');
    expect(batchCommandText({ statusOf: 'lockfiles', command: 'LOCK' })).toBe('Lock');
    expect(batchCommandText({ statusOf: 'somethingelse', command: 'UNLOCK' })).toBe('UNLOCK');
  });
});
