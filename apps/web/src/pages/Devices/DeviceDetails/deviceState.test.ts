import { INITIAL_DEVICE_STATE } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { STATE_LABELS } from '../../../features/devices/labels';
import { stateRows } from './deviceState';

describe('stateRows', () => {
  it('lists every setting of the state model, in sync when the device enforces what is desired', () => {
    const rows = stateRows(INITIAL_DEVICE_STATE, INITIAL_DEVICE_STATE);
    expect(rows.map((r) => r.key).sort()).toEqual(Object.keys(INITIAL_DEVICE_STATE).sort());
    expect(rows.map((r) => r.label)).toEqual(Object.values(STATE_LABELS));
    expect(rows.every((r) => !r.pending && r.desired === 'No' && r.reported === 'No')).toBe(true);
  });

  it('marks pending what the device does not enforce yet, and shows grades by name', () => {
    const desired = { ...INITIAL_DEVICE_STATE, locked: true, greyed: 'level2' as const };
    const reported = { ...INITIAL_DEVICE_STATE, greyed: 'level1' as const, alarm: true };
    const byKey = Object.fromEntries(stateRows(desired, reported).map((r) => [r.key, r]));
    expect(byKey.locked).toMatchObject({ desired: 'Yes', reported: 'No', pending: true });
    expect(byKey.greyed).toMatchObject({ desired: 'Grade 2', reported: 'Grade 1', pending: true });
    expect(byKey.alarm).toMatchObject({ desired: 'No', reported: 'Yes', pending: true });
    expect(byKey.wallpaper).toMatchObject({ pending: false });
  });

  it('has no reported values and nothing pending before the device reports', () => {
    const rows = stateRows({ ...INITIAL_DEVICE_STATE, locked: true }, null);
    expect(rows.every((r) => r.reported === null && !r.pending)).toBe(true);
  });
});
