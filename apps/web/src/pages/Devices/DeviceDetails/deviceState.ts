/**
 * The device's state beside what the server wants of it, with each setting's standing as the server
 * reports it (contract settingStandings: pending until the device says so; nothing pending
 * for a de-enrolled or released device).
 */
import type { DeviceRecord, DeviceState, SettingStanding } from '@lendlock/contract';
import { DEVICE_LABELS, STATE_LABELS } from '../../../features/devices/labels';

export interface StateRow {
  key: keyof DeviceState;
  label: string;
  desired: string;
  /** null when the device has not reported its state yet. */
  reported: string | null;
  standing: SettingStanding | null;
}

/** The grades: level1 = Grade 1, level2 = Grade 2. */
export const GRADE_LABELS = { level1: 'Grade 1', level2: 'Grade 2' } as const;

/** The badge of each standing: its text and colour. */
export const STANDING_BADGES: Record<SettingStanding, { label: string; color: string }> = {
  IN_EFFECT: { label: DEVICE_LABELS.stateInSync, color: 'green' },
  PENDING: { label: DEVICE_LABELS.statePending, color: 'yellow' },
  ON_REGISTRATION: { label: DEVICE_LABELS.stateOnRegistration, color: 'blue' },
};

function show<K extends keyof DeviceState>(key: K, value: DeviceState[K]): string {
  if (key === 'greyed') return value ? GRADE_LABELS[value as 'level1' | 'level2'] : DEVICE_LABELS.no;
  return value ? DEVICE_LABELS.yes : DEVICE_LABELS.no;
}

const KEYS = Object.keys(STATE_LABELS) as (keyof typeof STATE_LABELS)[];

export function stateRows(device: Pick<DeviceRecord, 'desired' | 'state' | 'standing'>): StateRow[] {
  const { desired, state: reported, standing } = device;
  return KEYS.map((key) => ({
    key,
    label: STATE_LABELS[key],
    desired: show(key, desired[key]),
    reported: reported ? show(key, reported[key]) : null,
    standing: standing[key] ?? null,
  }));
}
