import { z } from 'zod';
import { timeZoneSchema } from '../dates';
import {
  COMMAND_INTERFACES,
  COMMAND_STATUSES,
  type DeviceState,
  deviceStateSchema,
  INITIAL_DEVICE_STATE,
  RAW_COMMANDS,
} from '../device';

const imei = z
  .string()
  .trim()
  .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number');

/**
 * The query of the dashboard's calls (`homeData.php`, `GET /api/v2/dashboard`): the operator's time zone,
 * whose days "today" and the per-day chart count (else the server's REPORT_TIMEZONE).
 */
export const dashboardQuerySchema = z.object({ timeZone: timeZoneSchema.optional() });

/** `homeData.php`: the Dashboard's figures. */
export const homeDataResponseSchema = z.object({
  status: z.literal('success'),
  total_device: z.number().int(),
  device_today: z.number().int(),
  deenroll: z.number().int(),
});

/** `GET /api/v2/dashboard`: the charts beside the counts. */
export const dashboardChartsSchema = z.object({
  status: z.literal('success'),
  registrationsPerDay: z.array(z.object({ day: z.string(), count: z.number().int() })),
  commandsByStatus: z.array(
    z.object({ status: z.string().meta({ enum: [...COMMAND_STATUSES] }), count: z.number().int() }),
  ),
  devicesOnline: z.number().int(),
  devicesTotal: z.number().int(),
});

/**
 * Where one setting of a device's state stands (Device Details beside its desired and reported values):
 * - `IN_EFFECT`: the device reports the desired value (an enrolled or a released device);
 * - `PENDING`: an enrolled device does not report it yet, and the server is bringing it there (its command
 *   is on its way, or the reconcile sends one on the device's next report: device-protocol.md §7);
 * - `ON_REGISTRATION`: a de-enrolled (formatted) device: its agent is gone, nothing is sent to it and what
 *   it last reported no longer holds; the desired value is applied again when it registers again
 *   (device-protocol.md "Registering again": the desired state is kept, the reconcile re-applies it).
 * - null: nothing to say: an enrolled device that has not reported yet, a de-enrolled device's setting
 *   at the clean phone's value, a released device's setting it reports otherwise (it accepts no command).
 */
export const SETTING_STANDINGS = ['IN_EFFECT', 'PENDING', 'ON_REGISTRATION'] as const;
export type SettingStanding = (typeof SETTING_STANDINGS)[number];
const settingStandingSchema = z.enum(SETTING_STANDINGS).nullable();
export type DeviceStandings = Record<keyof DeviceState, SettingStanding | null>;

/** Each setting's standing (SETTING_STANDINGS) from a device's claim status, desired and reported states. */
export function settingStandings(
  claimstatus: string,
  desired: DeviceState,
  reported: DeviceState | null,
): DeviceStandings {
  const standing = (key: keyof DeviceState): SettingStanding | null => {
    if (claimstatus === 'DEENROLLED')
      return desired[key] !== INITIAL_DEVICE_STATE[key] ? 'ON_REGISTRATION' : null;
    if (reported === null) return null;
    if (desired[key] === reported[key]) return 'IN_EFFECT';
    return claimstatus === 'ENROLLED' ? 'PENDING' : null;
  };
  const keys = Object.keys(INITIAL_DEVICE_STATE) as (keyof DeviceState)[];
  return Object.fromEntries(keys.map((key) => [key, standing(key)])) as DeviceStandings;
}

/** A device record with the state the console shows beside it. */
export const deviceRecordSchema = z.object({
  imei1: z.string(),
  imei2: z.string().nullable(),
  claimstatus: z.string().meta({ enum: ['ENROLLED', 'DEENROLLED', 'RELEASED'] }),
  registrationstatus: z.string().meta({ enum: ['REGISTERED', 'RE-REGISTERED'] }),
  appversion: z.string(),
  apptype: z.string(),
  command: z.string().nullable(),
  createdat: z.string(),
  manufacturer: z.string(),
  brand: z.string(),
  model: z.string(),
  retailer: z.string().nullable(),
  match_status: z.string(),
  online: z.boolean(),
  last_seen_at: z.string().nullable(),
  state: deviceStateSchema.nullable(),
  desired: deviceStateSchema,
  /** Each setting's standing (settingStandings). */
  standing: z.object(
    Object.fromEntries(
      Object.keys(INITIAL_DEVICE_STATE).map((key) => [key, settingStandingSchema]),
    ) as Record<keyof DeviceState, typeof settingStandingSchema>,
  ),
});
export type DeviceRecord = z.infer<typeof deviceRecordSchema>;

/** `devicedetails.php`: one `imei`, or (Device Details batch, Last Command Reports) a list `imeis`. */
export const deviceDetailsRequestSchema = z
  .object({ imei: imei.optional(), imeis: z.array(imei).max(10_000).optional() })
  .refine((body) => body.imei !== undefined || (body.imeis?.length ?? 0) > 0, 'imei is required');
export const deviceDetailsResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(deviceRecordSchema),
  message: z.string().optional(),
});

/** A row of the Registrations report. */
export const registrationRowSchema = z.object({
  imei1: z.string(),
  imei2: z.string().nullable(),
  Match_Status: z.string(),
  Registration_status: z.string(),
  date_and_time: z.string(),
  Manufacturer: z.string(),
  Model: z.string(),
  brand: z.string(),
  model: z.string(),
  command: z.string().nullable(),
  createdat: z.string(),
});
export type RegistrationRow = z.infer<typeof registrationRowSchema>;

/** A row of the De-enroll report. */
export const deenrollRowSchema = z.object({
  imei1: z.string(),
  imei2: z.string().nullable(),
  action: z.string(),
  createdat: z.string(),
});
export type DeenrollRow = z.infer<typeof deenrollRowSchema>;

export const releaseRowSchema = z.object({
  imei1: z.string(),
  imei2: z.string().nullable(),
  user: z.string(),
  transactionId: z.string().nullable(),
  createdat: z.string(),
});

/** An executed command row (raw `command`; the console shows `displayCommand(command)`). */
export const executedCommandRowSchema = z.object({
  id: z.number().int(),
  date_and_time: z.string(),
  imei1: z.string(),
  transactionId: z.string(),
  interface: z.enum(COMMAND_INTERFACES),
  command: z.string().meta({ enum: [...RAW_COMMANDS] }),
  status: z.string().meta({ enum: [...COMMAND_STATUSES] }),
  user: z.string(),
  commandType: z.string(),
  createdat: z.string(),
});
export type ExecutedCommandRow = z.infer<typeof executedCommandRowSchema>;

export const auditRequestSchema = z.object({ imei1: imei });
export const auditResponseSchema = z.object({
  status: z.literal('success'),
  registration: z.array(registrationRowSchema),
  release: z.array(releaseRowSchema),
  commands: z.array(executedCommandRowSchema),
  deenroll: z.array(deenrollRowSchema),
});
export type AuditResponse = z.infer<typeof auditResponseSchema>;

export const appVersionResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(z.object({ appversion: z.string(), devices: z.number().int() })),
});

export const pendingCommandsRequestSchema = z.object({ imei: imei });
export const pendingCommandsResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(executedCommandRowSchema),
});
export const cancelCommandRequestSchema = z.object({ transactionId: z.string().min(1).max(64) });

export const financedImportRequestSchema = z.object({ imeis: z.array(imei).min(1).max(100_000) });
export const financedImportResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  added: z.number().int(),
});
