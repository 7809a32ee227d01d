import { z } from 'zod';
import { timeZoneSchema } from '../dates';
import { COMMAND_INTERFACES, COMMAND_STATUSES, deviceStateSchema, RAW_COMMANDS } from '../device';

const imei = z
  .string()
  .trim()
  .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number');

/**
 * The query of the dashboard's calls (`homeData.php`, `GET /api/v2/dashboard`): the operator's time zone,
 * whose days "today" and the per-day chart count (else the server's REPORT_TIMEZONE).
 */
export const dashboardQuerySchema = z.object({ timeZone: timeZoneSchema.optional() });

/** `homeData.php` (spec §3 Dashboard response). */
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

/** A device record (spec §3) with the state the console shows beside it. */
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

/** Spec §3 Registration row. */
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

/** Spec §3 De-enroll row. */
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

/** Spec §3 Executed command row (raw `command`; the console shows `displayCommand(command)`). */
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
