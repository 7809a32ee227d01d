/**
 * The Current state panel of Device Details tells the truth. Rendered to HTML with Mantine
 * (the web project runs in Node with no DOM) from device records as the server answers them (standings
 * by the contract's settingStandings): an enrolled device's unreported setting is Pending; a de-enrolled
 * one has nothing pending, shows what it last reported and what is re-applied when it registers again;
 * a released one has nothing pending and says it accepts no further commands.
 */
import {
  type DeviceRecord,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  MESSAGES,
  settingStandings,
} from '@lendlock/contract';
import { MantineProvider } from '@mantine/core';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { DEVICE_LABELS as L, STATE_LABELS } from '../../../features/devices/labels';
import { DeviceStatePanel } from './DeviceStatePanel';

const record = (
  claimstatus: 'ENROLLED' | 'DEENROLLED' | 'RELEASED',
  desired: Partial<DeviceState>,
  state: Partial<DeviceState> | null,
): DeviceRecord => {
  const wanted = { ...INITIAL_DEVICE_STATE, ...desired };
  const reported = state && { ...INITIAL_DEVICE_STATE, ...state };
  return {
    imei1: '356938035643809',
    imei2: null,
    claimstatus,
    registrationstatus: 'REGISTERED',
    appversion: '3.2.1',
    apptype: 'DEVICE_OWNER',
    command: null,
    createdat: '2030-01-01T00:00:00.000Z',
    manufacturer: 'Samsung Electronics',
    brand: 'Samsung',
    model: 'Galaxy A15',
    retailer: null,
    match_status: 'YES',
    online: false,
    last_seen_at: null,
    state: reported,
    desired: wanted,
    standing: settingStandings(claimstatus, wanted, reported),
  };
};

const decode = (text: string) =>
  text
    .replace(/&#x27;|&#39;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
const cells = (html: string) =>
  html
    .split(/<t[dh][^>]*>/)
    .slice(1)
    .map((cell) => decode(cell.replace(/<[^>]+>/g, '')).trim());

function render(device: DeviceRecord) {
  const html = renderToStaticMarkup(
    <MantineProvider>
      <DeviceStatePanel device={device} />
    </MantineProvider>,
  );
  /** The texts of the setting's row: label, desired, reported, standing. */
  const row = (key: keyof DeviceState) =>
    cells(new RegExp(`<tr[^>]*data-testid="state-${key}"[^>]*>(.*?)</tr>`).exec(html)?.[1] ?? '');
  const header = cells(/<thead[^>]*>(.*?)<\/thead>/.exec(html)?.[1] ?? '');
  const note = decode(/data-testid="device-state-note"[^>]*>([^<]*)</.exec(html)?.[1] ?? '');
  return { html, row, header, note };
}

describe('DeviceStatePanel', () => {
  it('an enrolled device: Pending until it reports what is desired, In effect once it does', () => {
    const { row, header, note } = render(
      record('ENROLLED', { locked: true, cameraDisabled: true }, { cameraDisabled: true }),
    );
    expect(header).toEqual([L.stateSetting, L.stateDesired, L.stateReported, '']);
    expect(row('locked')).toEqual([STATE_LABELS.locked, 'Yes', 'No', L.statePending]);
    expect(row('cameraDisabled')).toEqual([STATE_LABELS.cameraDisabled, 'Yes', 'Yes', L.stateInSync]);
    expect(note).toBe('');
  });

  it('a de-enrolled device: nothing pending; what it last reported, and what returns when it registers again', () => {
    const { html, row, header, note } = render(
      record('DEENROLLED', { locked: true, cameraDisabled: true, wallpaper: true }, { wallpaper: true }),
    );
    expect(html).not.toContain(L.statePending);
    expect(html).not.toContain(L.stateInSync);
    expect(header).toEqual([L.stateSetting, L.stateDesired, L.stateLastReported, '']);
    expect(row('locked')).toEqual([STATE_LABELS.locked, 'Yes', 'No', L.stateOnRegistration]);
    expect(row('cameraDisabled')).toEqual([STATE_LABELS.cameraDisabled, 'Yes', 'No', L.stateOnRegistration]);
    expect(row('wallpaper')).toEqual([STATE_LABELS.wallpaper, 'Yes', 'Yes', L.stateOnRegistration]);
    expect(row('alarm')).toEqual([STATE_LABELS.alarm, 'No', 'No', '']);
    expect(note).toBe(`${MESSAGES.commandDeenrolled} ${L.stateDeenrolled}`);
  });

  it('a released device: nothing pending, and it accepts no further commands', () => {
    const { html, row, note } = render(
      record('RELEASED', { released: true }, { released: true, locked: true }),
    );
    expect(html).not.toContain(L.statePending);
    expect(row('released')).toEqual([STATE_LABELS.released, 'Yes', 'Yes', L.stateInSync]);
    expect(row('locked')).toEqual([STATE_LABELS.locked, 'No', 'Yes', '']);
    expect(note).toBe(MESSAGES.commandReleased);
  });
});
