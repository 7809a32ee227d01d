import {
  type DeenrollRow,
  type DeviceRecord,
  type ExecutedCommandRow,
  INITIAL_DEVICE_STATE,
  type RegistrationRow,
  settingStandings,
} from '@lendlock/contract';
import type { CommandRow, DeviceRow } from '../../db/types';

const iso = (value: Date | string | null): string => (value ? new Date(value).toISOString() : '');

export function toDeviceRecord(row: DeviceRow): DeviceRecord {
  const state = row.reported_state ? { ...INITIAL_DEVICE_STATE, ...row.reported_state } : null;
  const desired = { ...INITIAL_DEVICE_STATE, ...(row.desired_state ?? {}) };
  return {
    imei1: row.imei1,
    imei2: row.imei2,
    claimstatus: row.claimstatus,
    registrationstatus: row.registrationstatus,
    appversion: row.appversion,
    apptype: row.apptype,
    command: row.last_command,
    createdat: iso(row.created_at),
    manufacturer: row.manufacturer,
    brand: row.brand,
    model: row.model,
    retailer: row.retailer_phone,
    match_status: row.match_status,
    online: row.online,
    last_seen_at: row.last_seen_at ? iso(row.last_seen_at) : null,
    state,
    desired,
    standing: settingStandings(row.claimstatus, desired, state),
  };
}

export interface RegistrationJoinRow {
  imei1: string;
  imei2: string | null;
  match_status: string;
  registration_status: string;
  manufacturer: string;
  brand: string;
  model: string;
  created_at: Date | string;
  last_command: string | null;
}

export function toRegistrationRow(row: RegistrationJoinRow): RegistrationRow {
  return {
    imei1: row.imei1,
    imei2: row.imei2,
    Match_Status: row.match_status,
    Registration_status: row.registration_status,
    date_and_time: iso(row.created_at),
    Manufacturer: row.manufacturer,
    Model: row.model,
    brand: row.brand,
    model: row.model,
    command: row.last_command,
    createdat: iso(row.created_at),
  };
}

export function toDeenrollRow(row: {
  imei1: string;
  imei2: string | null;
  action: string;
  created_at: Date | string;
}): DeenrollRow {
  return { imei1: row.imei1, imei2: row.imei2, action: row.action, createdat: iso(row.created_at) };
}

export type CommandListRow = Pick<
  CommandRow,
  | 'id'
  | 'transaction_id'
  | 'imei1'
  | 'command'
  | 'options'
  | 'interface'
  | 'status'
  | 'user_label'
  | 'created_at'
  | 'completed_at'
>;

/** `commandType` carries the command's options (grade or notification case), empty otherwise. */
export function toExecutedCommandRow(row: CommandListRow): ExecutedCommandRow {
  const options = row.options ?? {};
  return {
    id: Number(row.id),
    date_and_time: iso(row.completed_at ?? row.created_at),
    imei1: row.imei1,
    transactionId: row.transaction_id,
    interface: row.interface,
    command: row.command,
    status: row.status,
    user: row.user_label,
    commandType: options.level ?? options.caseType ?? '',
    createdat: iso(row.created_at),
  };
}
