/**
 * The command definition table: one row per command screen. Routes, sidebars, server validation, batch
 * scripts, reports and tests all read it; a new command is one row, not a new page.
 */
import { z } from 'zod';
import { COMMAND_STATUSES, RAW_COMMANDS, type RawCommand } from './device';
import type { ScreenName } from './screens';

/** Extra inputs a command's single form takes. */
export type CommandInput = 'none' | 'grade' | 'notify';

export interface CommandDefinition {
  /** Route name of the screen (also its permission). */
  readonly screen: ScreenName;
  /** The single action value sent to locknotification.php / getimeidetails.php. */
  readonly action: string;
  readonly raw: RawCommand;
  /** Name shown in menus and reports. */
  readonly displayName: string;
  /** Multipart bulk upload script, null when the command has no batch form. */
  readonly bulkScript: string | null;
  /** Batch progress key (`statusOf`). */
  readonly statusOf: string | null;
  /** The single command's success alert, exactly. */
  readonly successMessage: string;
  readonly single: boolean;
  readonly batch: boolean;
  readonly input: CommandInput;
  /** Asks for confirmation before sending (Release's single form, Formatted Device). */
  readonly confirm?: string;
}

const row = (d: Omit<CommandDefinition, 'input'> & { input?: CommandInput }): CommandDefinition => ({
  input: 'none',
  ...d,
});

export const COMMAND_DEFINITIONS = [
  row({
    screen: 'releaseDevice',
    action: 'release',
    raw: 'RELEASE',
    displayName: 'Release Device',
    bulkScript: 'bulkReleaseCopy.php',
    statusOf: 'releasefiles',
    successMessage: 'Release Device initiated  successfully.',
    single: true,
    batch: true,
    confirm: 'Are you sure you want to release this device?',
  }),
  row({
    screen: 'lockDevice',
    action: 'lock',
    raw: 'LOCK',
    displayName: 'Lock',
    bulkScript: 'bulkLockCopy.php',
    statusOf: 'lockfiles',
    successMessage: 'Lock initiated  successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'unlockDevice',
    action: 'unlock',
    raw: 'UNLOCK',
    displayName: 'Unlock',
    bulkScript: 'bulkUnlockCopy.php',
    statusOf: 'unlockfiles',
    successMessage: 'Unlock  Notification sent successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'blockApp',
    action: 'blockapp',
    raw: 'BLOCKAPP',
    displayName: 'Block App',
    bulkScript: 'bulkBlockCopy.php',
    statusOf: 'blockfiles',
    successMessage: 'Block Apps initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'unblockapp',
    action: 'unblockapp',
    raw: 'UNBLOCKAPP',
    displayName: 'Unblock App',
    bulkScript: 'bulkUnblockCopy.php',
    statusOf: 'unblockfiles',
    successMessage: 'Unblock App Notification sent successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'enableNotification',
    action: 'notify',
    raw: 'NOTIFY',
    displayName: 'Enable Notification',
    bulkScript: 'bulkNotifyCopy.php',
    statusOf: 'notifyfiles',
    successMessage: 'Enable Notification initiated  successfully.',
    single: true,
    batch: true,
    input: 'notify',
  }),
  row({
    screen: 'formattedDevice',
    action: 'formatteddevice',
    raw: 'FORMATTEDDEVICE',
    displayName: 'De-enroll formatted device',
    bulkScript: null,
    statusOf: null,
    successMessage: 'Formatted Device de-enrolled successfully. Re-install the app immediately',
    // Not in the spec: it cannot be undone, so the operator confirms it.
    confirm:
      'De-enroll this device? This cannot be undone: the app must be installed and the device registered again.',
    single: true,
    batch: false,
  }),
  row({
    screen: 'disableApp',
    action: 'disableapp',
    raw: 'GREYAPP',
    displayName: 'Disable App',
    bulkScript: 'bulkGreyCopy.php',
    statusOf: 'disableappfiles',
    successMessage: 'Disable Apps initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'gradeDisableApp',
    action: 'disableapp',
    raw: 'GREYAPP',
    displayName: 'Graded Disable App',
    bulkScript: 'bulkGreyCopy.php',
    statusOf: 'disableappfiles',
    successMessage: ' Graded Disable Apps initiated  successfully.',
    single: true,
    batch: true,
    input: 'grade',
  }),
  row({
    screen: 'restoreApp',
    action: 'restoreapp',
    raw: 'UNGREYAPP',
    displayName: 'Restore App',
    bulkScript: 'bulkUngreyCopy.php',
    statusOf: 'restoreappfiles',
    successMessage: 'Restore Apps initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'setWallpaper',
    action: 'setwallpaper',
    raw: 'LOCKWALLPAPER',
    displayName: 'Set Wallpaper',
    bulkScript: 'bulkSetWallpaperCopy.php',
    statusOf: 'setWallpaperfiles',
    successMessage: 'Set Wallpaper initiated successfully.',
    single: false,
    batch: true,
  }),
  row({
    screen: 'removeWallpaper',
    action: 'removewallpaper',
    raw: 'UNLOCKWALLPAPER',
    displayName: 'Remove Wallpaper',
    bulkScript: 'bulkUnsetWallpaperCopy.php',
    statusOf: 'removewallpaperfiles',
    successMessage: 'Remove Wallpaper initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'activateAlarm',
    action: 'activatealarm',
    raw: 'SETALARM',
    displayName: 'Activate Alarm',
    bulkScript: 'bulkSetAlarmCopy.php',
    statusOf: 'activatealarmfiles',
    successMessage: 'Activate Alarm initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'deactivateAlarm',
    action: 'deactivatealarm',
    raw: 'UNSETALARM',
    displayName: 'Deactivate Alarm',
    bulkScript: 'bulkUnsetAlarmCopy.php',
    statusOf: 'deactivatealarmfiles',
    successMessage: 'Deactivate Alarm initiated successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'enableCamera',
    action: 'enablecamera',
    raw: 'ENABLECAMERA',
    displayName: 'Enable Camera',
    bulkScript: 'bulkEnableCameraCopy.php',
    statusOf: 'enablecamerafiles',
    successMessage: 'Enable Camera initiated  successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'disableCamera',
    action: 'disablecamera',
    raw: 'DISABLECAMERA',
    displayName: 'Disable Camera',
    bulkScript: 'bulkDisableCameraCopy.php',
    statusOf: 'disablecamerafiles',
    successMessage: 'Disable Camera initiated  successfully.',
    single: true,
    batch: true,
  }),
  row({
    screen: 'enableCredit',
    action: 'credit',
    raw: 'ENABLECREDIT',
    displayName: 'Enable Credit',
    bulkScript: 'bulkEnableCreditCopy.php',
    statusOf: 'enablecreditfiles',
    successMessage: 'Enable Credit initiated successfully',
    single: true,
    batch: true,
  }),
  // Revoke Credit sends a revoke command, never an enable-credit one.
  row({
    screen: 'revokeCredit',
    action: 'revokecredit',
    raw: 'REVOKECREDIT',
    displayName: 'Revoke Credit',
    bulkScript: 'bulkRevokeCreditCopy.php',
    statusOf: 'revokecreditfiles',
    successMessage: 'Revoke Credit initiated successfully.',
    single: true,
    batch: true,
  }),
] as const satisfies readonly CommandDefinition[];

/** The batch-only Set Wallpaper route (`batch`) runs the Set Wallpaper definition. */
export const SCREEN_ALIASES: Partial<Record<ScreenName, ScreenName>> = { batch: 'setWallpaper' };

export function commandForScreen(screen: ScreenName): CommandDefinition | undefined {
  const target = SCREEN_ALIASES[screen] ?? screen;
  return COMMAND_DEFINITIONS.find((d) => d.screen === target);
}

/**
 * Action value (single commands, getimeidetails / locknotification / updateCommandOnServer)
 * → definition. Every row's action is accepted, whether or not its screen has a single form: Set
 * Wallpaper's screen is batch-only, yet those calls take `setwallpaper` and integrators send it.
 * disableapp maps to the plain Disable App row (the first with that action).
 */
export function commandForAction(action: string): CommandDefinition | undefined {
  return COMMAND_DEFINITIONS.find((d) => d.action === action);
}

export function commandForBulkScript(script: string): CommandDefinition | undefined {
  return COMMAND_DEFINITIONS.find((d) => d.bulkScript === script && d.input !== 'grade');
}

/** The action values the single-command calls accept (every row's, once). */
export const SINGLE_ACTIONS = [...new Set(COMMAND_DEFINITIONS.map((d) => d.action))];

export const GRADES = [
  { value: 'level1', label: 'Grade 1' },
  { value: 'level2', label: 'Grade 2' },
] as const;

export const DEVICE_ACTIONS = ['REBOOT', 'UPDATE'] as const;

/**
 * The screens whose permission covers a raw command (any one of them suffices): who may cancel it, or
 * read and steer a batch of it. GREYAPP serves Disable App and Graded Disable App; the device actions
 * belong to Device Action, a SUPERADMIN-only screen. Read from the table above, never restated.
 */
export function screensOfCommand(raw: string): ScreenName[] {
  if ((DEVICE_ACTIONS as readonly string[]).includes(raw)) return ['deviceAction'];
  return [...new Set(COMMAND_DEFINITIONS.filter((d) => d.raw === raw).map((d) => d.screen))];
}

/** A batch feature (`statusOf`) → its command definition (Disable App's for `disableappfiles`). */
export function commandForStatusOf(statusOf: string): CommandDefinition | undefined {
  return COMMAND_DEFINITIONS.find((d) => d.statusOf === statusOf);
}
export const DEVICE_ACTION_SUCCESS = 'Device Action initiated successfully.';
/** The dynamic action table's success alert. */
export const dynamicActionSuccess = (action: string) => `${action} App initiated successfully.`;
/** The dynamic action table's per-row actions (label → action value). */
export const DYNAMIC_ACTIONS = [
  { label: 'Block', action: 'blockapp' },
  { label: 'Unblock', action: 'unblockapp' },
] as const;

const imei = z
  .string()
  .trim()
  .regex(/^\d{15}$/, 'Please provide a 15 digit IMEI number');

/** `locknotification.php`. `user` is kept for compatibility; the server acts as the signed-in identity. */
export const lockNotificationRequestSchema = z.object({
  imei,
  // Any other value is refused with a message (the handler); the document lists the values (OpenAPI enum).
  action: z.string().trim().min(1).meta({ enum: SINGLE_ACTIONS }),
  user: z.string().optional(),
  level: z.enum(['level1', 'level2']).optional(),
  message: z.string().max(2000).optional(),
  caseType: z.enum(['Pre', 'Due', 'Post']).optional(),
  clientof: z.string().max(100).optional(),
  retailerNumber: z.string().max(20).optional(),
});
export type LockNotificationRequest = z.infer<typeof lockNotificationRequestSchema>;

export const commandResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  /** The command's id: the console follows its live status with it. */
  transactionId: z.string(),
});

export const adminLockNotificationRequestSchema = z.object({
  imei: z.string().trim(),
  action: z
    .string()
    .trim()
    .meta({ enum: [...DEVICE_ACTIONS], description: 'REBOOT or UPDATE (case-insensitive).' }),
  user: z.string().optional(),
});
export const adminLockNotificationResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  transactionId: z.string().optional(),
  batchId: z.number().int().optional(),
  total: z.number().int(),
});

export const formattedDeviceRequestSchema = z.object({
  imei,
  user: z.string().optional(),
  action: z.literal('formatteddevice').optional(),
});

export const commandStatusRequestSchema = z.object({ transactionId: z.string().min(1).max(64) });
export const commandStatusResponseSchema = z.object({
  status: z.literal('success'),
  command: z.object({
    transactionId: z.string(),
    imei1: z.string(),
    command: z.string().meta({ enum: [...RAW_COMMANDS] }),
    status: z.string().meta({ enum: [...COMMAND_STATUSES] }),
    result: z.string().nullable(),
  }),
});

export const batchStatusRequestSchema = z.object({ batchId: z.coerce.number().int().positive() });
export const batchStatusResponseSchema = z.object({
  status: z.literal('success'),
  total: z.number().int(),
  byStatus: z.record(z.string(), z.number().int()),
});
