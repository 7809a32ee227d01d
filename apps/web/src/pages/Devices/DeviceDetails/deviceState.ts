/** The device's state beside what the server wants of it (design.md §4: pending until the device says so). */
import type { DeviceState } from '@lendlock/contract';
import { DEVICE_LABELS, STATE_LABELS } from '../../../features/devices/labels';

export interface StateRow {
  key: keyof DeviceState;
  label: string;
  desired: string;
  /** null when the device has not reported its state yet. */
  reported: string | null;
  /** The device does not yet enforce what is desired. */
  pending: boolean;
}

/** Spec §9 grades: level1 = Grade 1, level2 = Grade 2. */
export const GRADE_LABELS = { level1: 'Grade 1', level2: 'Grade 2' } as const;

function show<K extends keyof DeviceState>(key: K, value: DeviceState[K]): string {
  if (key === 'greyed') return value ? GRADE_LABELS[value as 'level1' | 'level2'] : DEVICE_LABELS.no;
  return value ? DEVICE_LABELS.yes : DEVICE_LABELS.no;
}

const KEYS = Object.keys(STATE_LABELS) as (keyof typeof STATE_LABELS)[];

export function stateRows(desired: DeviceState, reported: DeviceState | null): StateRow[] {
  return KEYS.map((key) => ({
    key,
    label: STATE_LABELS[key],
    desired: show(key, desired[key]),
    reported: reported ? show(key, reported[key]) : null,
    pending: reported !== null && desired[key] !== reported[key],
  }));
}
