import { INITIAL_DEVICE_STATE, settingStandings } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { STATE_LABELS } from '../../../features/devices/labels';
import { stateRows } from './deviceState';

const device = (
  claimstatus: string,
  desired: typeof INITIAL_DEVICE_STATE,
  state: typeof INITIAL_DEVICE_STATE | null,
) => ({ desired, state, standing: settingStandings(claimstatus, desired, state) });

describe('stateRows', () => {
  it('lists every setting of the state model, in effect when the device enforces what is desired', () => {
    const rows = stateRows(device('ENROLLED', INITIAL_DEVICE_STATE, INITIAL_DEVICE_STATE));
    expect(rows.map((r) => r.key).sort()).toEqual(Object.keys(INITIAL_DEVICE_STATE).sort());
    expect(rows.map((r) => r.label)).toEqual(Object.values(STATE_LABELS));
    expect(rows.every((r) => r.standing === 'IN_EFFECT' && r.desired === 'No' && r.reported === 'No')).toBe(
      true,
    );
  });

  it('marks pending what an enrolled device does not enforce yet, and shows grades by name', () => {
    const desired = { ...INITIAL_DEVICE_STATE, locked: true, greyed: 'level2' as const };
    const reported = { ...INITIAL_DEVICE_STATE, greyed: 'level1' as const, alarm: true };
    const byKey = Object.fromEntries(stateRows(device('ENROLLED', desired, reported)).map((r) => [r.key, r]));
    expect(byKey.locked).toMatchObject({ desired: 'Yes', reported: 'No', standing: 'PENDING' });
    expect(byKey.greyed).toMatchObject({ desired: 'Grade 2', reported: 'Grade 1', standing: 'PENDING' });
    expect(byKey.alarm).toMatchObject({ desired: 'No', reported: 'Yes', standing: 'PENDING' });
    expect(byKey.wallpaper).toMatchObject({ standing: 'IN_EFFECT' });
  });

  it('has no reported values and nothing pending before the device reports', () => {
    const rows = stateRows(device('ENROLLED', { ...INITIAL_DEVICE_STATE, locked: true }, null));
    expect(rows.every((r) => r.reported === null && r.standing === null)).toBe(true);
  });

  it('has nothing pending for a de-enrolled device: what it must have again waits for its registration', () => {
    const desired = { ...INITIAL_DEVICE_STATE, locked: true, greyed: 'level1' as const };
    const rows = stateRows(device('DEENROLLED', desired, INITIAL_DEVICE_STATE));
    const byKey = Object.fromEntries(rows.map((r) => [r.key, r]));
    expect(byKey.locked).toMatchObject({ reported: 'No', standing: 'ON_REGISTRATION' });
    expect(byKey.greyed).toMatchObject({ reported: 'No', standing: 'ON_REGISTRATION' });
    expect(rows.filter((r) => r.standing !== null).map((r) => r.key)).toEqual(['locked', 'greyed']);
  });
});
