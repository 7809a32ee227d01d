/**
 * The device side of the contract (docs/device-protocol.md): raw command names, which ones set desired state,
 * the device's state model, and the MQTT topics and payloads. The server and the simulated fleet both use it.
 */
import { z } from 'zod';

/** Raw commands as stored and shown in reports (with the display mapping below). */
export const RAW_COMMANDS = [
  'LOCK',
  'UNLOCK',
  'RELEASE',
  'BLOCKAPP',
  'UNBLOCKAPP',
  'NOTIFY',
  'GREYAPP',
  'UNGREYAPP',
  'LOCKWALLPAPER',
  'UNLOCKWALLPAPER',
  'SETALARM',
  'UNSETALARM',
  'ENABLECAMERA',
  'DISABLECAMERA',
  'ENABLECREDIT',
  'REVOKECREDIT',
  'REBOOT',
  'UPDATE',
  'FORMATTEDDEVICE',
] as const;
export type RawCommand = (typeof RAW_COMMANDS)[number];
export const rawCommandSchema = z.enum(RAW_COMMANDS);

/** These raw commands display under another name; others display unchanged. */
const DISPLAY: Partial<Record<string, string>> = {
  LOCKWALLPAPER: 'SET WALLPAPER',
  UNLOCKWALLPAPER: 'REMOVE WALLPAPER',
  SETALARM: 'ACTIVATE ALARM',
  UNSETALARM: 'DEACTIVATE ALARM',
  GREYAPP: 'DISABLE APP',
  UNGREYAPP: 'RESTORE APP',
};
export function displayCommand(raw: string): string {
  return DISPLAY[raw] ?? raw;
}

/** The device state the agent enforces. */
export const deviceStateSchema = z.object({
  locked: z.boolean(),
  appsBlocked: z.boolean(),
  /** Greyed (disabled) app grade, or null. */
  greyed: z.enum(['level1', 'level2']).nullable(),
  wallpaper: z.boolean(),
  alarm: z.boolean(),
  cameraDisabled: z.boolean(),
  credit: z.boolean(),
  released: z.boolean(),
});
export type DeviceState = z.infer<typeof deviceStateSchema>;

export const INITIAL_DEVICE_STATE: DeviceState = {
  locked: false,
  appsBlocked: false,
  greyed: null,
  wallpaper: false,
  alarm: false,
  cameraDisabled: false,
  credit: false,
  released: false,
};

export interface CommandOptions {
  level?: 'level1' | 'level2';
  message?: string;
  caseType?: 'Pre' | 'Due' | 'Post';
}

/**
 * State commands set a part of the desired state (the key); a newer command on the same key supersedes
 * an older one not yet sent. One-shot commands are delivered once each, in order. FORMATTEDDEVICE is a
 * server-side de-enrollment (the formatted phone has no agent left to answer).
 */
export type CommandKind = 'state' | 'oneshot' | 'server';

const STATE_KEY: Partial<Record<RawCommand, keyof DeviceState>> = {
  LOCK: 'locked',
  UNLOCK: 'locked',
  RELEASE: 'released',
  BLOCKAPP: 'appsBlocked',
  UNBLOCKAPP: 'appsBlocked',
  GREYAPP: 'greyed',
  UNGREYAPP: 'greyed',
  LOCKWALLPAPER: 'wallpaper',
  UNLOCKWALLPAPER: 'wallpaper',
  SETALARM: 'alarm',
  UNSETALARM: 'alarm',
  ENABLECAMERA: 'cameraDisabled',
  DISABLECAMERA: 'cameraDisabled',
  ENABLECREDIT: 'credit',
  REVOKECREDIT: 'credit',
};

export function commandKind(command: RawCommand): CommandKind {
  if (command === 'FORMATTEDDEVICE') return 'server';
  return STATE_KEY[command] ? 'state' : 'oneshot';
}

/**
 * Commands an agent cannot finish at once (the phone restarts; an update downloads and installs): it
 * acknowledges DELIVERED on receipt, then EXECUTED or FAILED when done. Every other command executes at
 * once and is acknowledged with its outcome alone (device-protocol.md §3); the DELIVERED of such a
 * command would be followed by its final word within the same moment, and the server would discard it.
 */
export const DELIVERED_FIRST: ReadonlySet<RawCommand> = new Set<RawCommand>(['REBOOT', 'UPDATE']);

export function stateKeyOf(command: RawCommand): keyof DeviceState | null {
  return STATE_KEY[command] ?? null;
}

/** The state after a device executes a command (pure; the simulator and the server's desired state use it). */
export function applyCommand(
  state: DeviceState,
  command: RawCommand,
  options: CommandOptions = {},
): DeviceState {
  switch (command) {
    case 'LOCK':
      return { ...state, locked: true };
    case 'UNLOCK':
      return { ...state, locked: false };
    case 'RELEASE':
      // A released phone is the customer's: every restriction is lifted.
      return { ...INITIAL_DEVICE_STATE, released: true };
    case 'BLOCKAPP':
      return { ...state, appsBlocked: true };
    case 'UNBLOCKAPP':
      return { ...state, appsBlocked: false };
    case 'GREYAPP':
      return { ...state, greyed: options.level ?? 'level1' };
    case 'UNGREYAPP':
      return { ...state, greyed: null };
    case 'LOCKWALLPAPER':
      return { ...state, wallpaper: true };
    case 'UNLOCKWALLPAPER':
      return { ...state, wallpaper: false };
    case 'SETALARM':
      return { ...state, alarm: true };
    case 'UNSETALARM':
      return { ...state, alarm: false };
    case 'ENABLECAMERA':
      return { ...state, cameraDisabled: false };
    case 'DISABLECAMERA':
      return { ...state, cameraDisabled: true };
    case 'ENABLECREDIT':
      return { ...state, credit: true };
    case 'REVOKECREDIT':
      return { ...state, credit: false };
    default:
      return state;
  }
}

// ---- MQTT ----

export const TOPIC_ROOT = 'lendlock/d';
export const topics = {
  cmd: (imei: string) => `${TOPIC_ROOT}/${imei}/cmd`,
  ack: (imei: string) => `${TOPIC_ROOT}/${imei}/ack`,
  state: (imei: string) => `${TOPIC_ROOT}/${imei}/state`,
  status: (imei: string) => `${TOPIC_ROOT}/${imei}/status`,
} as const;

/** `lendlock/d/{imei}/{kind}` → its parts, or null for any other topic. */
export function parseDeviceTopic(
  topic: string,
): { imei: string; kind: 'cmd' | 'ack' | 'state' | 'status' } | null {
  const match = /^lendlock\/d\/(\d{15})\/(cmd|ack|state|status)$/.exec(topic);
  return match ? { imei: match[1] as string, kind: match[2] as 'cmd' | 'ack' | 'state' | 'status' } : null;
}

/** Server → device on `cmd` (QoS 1). `id` is the command's transactionId; devices ignore ids already executed. */
export const commandMessageSchema = z.object({
  id: z.string().min(1).max(64),
  command: rawCommandSchema,
  options: z
    .object({
      level: z.enum(['level1', 'level2']).optional(),
      message: z.string().max(2000).optional(),
      caseType: z.enum(['Pre', 'Due', 'Post']).optional(),
    })
    .default({}),
  issuedAt: z.string(),
  /** 2: typed by an operator or sent by an integrator; 1: a reconcile; 0: batch work (device-protocol.md). */
  priority: z.number().int().min(0).max(2).optional(),
});
export type CommandMessage = z.infer<typeof commandMessageSchema>;

/**
 * A device's text as the server keeps it: without NUL characters, which PostgreSQL text cannot store (the
 * whole write would fail), and cut to `max` characters rather than refused. A refused acknowledgement is
 * resent every 30 s forever, so whatever an agent says in one is accepted and kept as far as it fits.
 */
const deviceText = (max: number) =>
  z.string().transform((value) => {
    const clean = value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
    if (clean.length <= max) return clean;
    // Cut by code points, never between the halves of a surrogate pair.
    return Array.from(clean.slice(0, max * 2))
      .slice(0, max)
      .join('');
  });

/** Device → server on `ack` (QoS 1): the device's own acknowledgement. */
export const ACK_STATUSES = ['DELIVERED', 'EXECUTED', 'FAILED'] as const;
export const ackMessageSchema = z.object({
  // A missing or empty id (after NULs are removed) names no command: such an ack is ignored.
  id: z
    .string()
    .transform((value) => value.replaceAll('\u0000', ''))
    .pipe(z.string().min(1).max(64)),
  status: z.enum(ACK_STATUSES),
  /** Any length is accepted; the first 500 characters are kept. */
  result: deviceText(500).optional(),
  state: deviceStateSchema.optional(),
});
export type AckMessage = z.infer<typeof ackMessageSchema>;

/** Device → server on `state` (QoS 1): what the device enforces now. */
export const stateMessageSchema = z.object({
  state: deviceStateSchema,
  /** Any length is accepted; the first 50 characters are kept. */
  appversion: deviceText(50).optional(),
});
export type StateMessage = z.infer<typeof stateMessageSchema>;

/** Device → server on `status`: `online` after connecting; the will message says `offline` (neither retained). */
export const DEVICE_ONLINE = 'online';
export const DEVICE_OFFLINE = 'offline';

/**
 * Server → every device (device-protocol.md §2, "When the server comes back"): a server instance says
 * `online` here each time it has (re)subscribed to the devices' topics, and every agent subscribed to it
 * announces itself again (`online`, then its state) after a random delay below `announceWithinMs`. Not
 * retained: only a device that was connected before the server subscribed can have gone unheard.
 */
export const SERVER_STATUS_TOPIC = 'lendlock/server/status';
export const serverOnlineSchema = z.object({
  status: z.literal('online'),
  /** The agent announces itself after a random delay in [0, announceWithinMs). */
  announceWithinMs: z.number().int().min(0).max(600_000),
});
export type ServerOnline = z.infer<typeof serverOnlineSchema>;
/** The delay an agent takes when the server's message cannot be read (a newer server, say). */
export const DEFAULT_ANNOUNCE_WITHIN_MS = 30_000;
/**
 * Announcements the server asks for per second when it comes back: the spread `announceWithinMs` grows
 * with the fleet (at least 1 s, at most 10 min), so that a million phones do not answer at once.
 */
export const ANNOUNCEMENTS_PER_SECOND = 2000;
export function announceWithinMs(devices: number): number {
  return Math.min(600_000, Math.max(1000, Math.ceil((devices / ANNOUNCEMENTS_PER_SECOND) * 1000)));
}
/** How long an agent waits before announcing itself again after a message on the server status topic. */
export function announceDelayMs(payload: string, random: () => number = Math.random): number {
  let window = DEFAULT_ANNOUNCE_WITHIN_MS;
  try {
    const parsed = serverOnlineSchema.safeParse(JSON.parse(payload));
    if (parsed.success) window = parsed.data.announceWithinMs;
  } catch {
    // Not JSON: announce anyway, within the default window.
  }
  return Math.floor(random() * window);
}

/**
 * Command statuses (device-protocol.md §6). Only the device's acknowledgements move a command to
 * DELIVERED/EXECUTED/FAILED.
 */
export const COMMAND_STATUSES = [
  'QUEUED',
  'SENT',
  'DELIVERED',
  'EXECUTED',
  'FAILED',
  'SUPERSEDED',
  'CANCELLED',
  'EXPIRED',
] as const;
export type CommandStatus = (typeof COMMAND_STATUSES)[number];
export const PENDING_STATUSES: readonly CommandStatus[] = ['QUEUED', 'SENT', 'DELIVERED'];

/**
 * Where a command came from: S single (console), A an API key, B a batch (or device action ALL), C the
 * collections engine (an addition to the spec: docs/features.md § Deviations from the spec, point 23); a C
 * command's user is its rule.
 */
export const COMMAND_INTERFACES = ['S', 'A', 'B', 'C'] as const;
export type CommandInterface = (typeof COMMAND_INTERFACES)[number];

// ---- Registration over HTTPS (docs/device-protocol.md §1) ----

const imei = z.string().regex(/^\d{15}$/, 'imei must be 15 digits');
const base64 = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'must be base64');

export const deviceRegistrationSchema = z
  .object({
    imei1: imei,
    imei2: imei.optional().or(z.literal('')).nullable(),
    manufacturer: z.string().trim().max(100).default(''),
    brand: z.string().trim().max(100).default(''),
    model: z.string().trim().max(100).default(''),
    appversion: z.string().trim().max(50).default(''),
    apptype: z.string().trim().max(50).default(''),
    retailer_phone: z
      .string()
      .regex(/^\d{10}$/, 'retailer_phone must be 10 digits')
      .optional()
      .nullable(),
    /** The device key: EC P-256, SPKI DER in base64 (the private half stays in the Android Keystore). */
    publicKey: base64(400).optional(),
    /** A nonce from `POST /device/v1/nonce` for this imei1: the challenge of `signature` and `attestation`. */
    nonce: base64(100).optional(),
    /** ECDSA (SHA-256, DER) by the device key over `registrationChallenge(imei1, nonce)`, in base64. */
    signature: base64(200).optional(),
    /** An Android key attestation chain: DER certificates in base64, leaf first. */
    attestation: z.array(base64(16_000)).min(1).max(10).optional(),
  })
  .refine((r) => !r.imei2 || r.imei2 !== r.imei1, {
    message: 'imei2 must differ from imei1',
    path: ['imei2'],
  })
  .refine((r) => !r.signature || r.nonce, { message: 'a signature needs its nonce', path: ['nonce'] })
  .refine((r) => !r.attestation || (r.nonce && r.publicKey), {
    message: 'an attestation needs the nonce and the publicKey it attests',
    path: ['attestation'],
  });
export type DeviceRegistration = z.infer<typeof deviceRegistrationSchema>;

/** The bytes a device key signs to prove it holds the enrolled key: UTF-8 of this text. */
export function registrationChallenge(imei1: string, nonce: string): string {
  return `lendlock-register:${imei1}:${nonce}`;
}

export const deviceRegistrationResponseSchema = z.object({
  status: z.literal('success'),
  registrationstatus: z.string(),
  /** The device's own MQTT credential: username is imei1. Shown once; stored hashed. */
  credential: z.string(),
  mqttUrl: z.string(),
  /** The client id the device must connect with. */
  clientId: z.string(),
  /** How the registration was admitted: a first one, a proof by the device key, an operator's approval, … */
  admittedBy: z.enum(['first', 'signature', 'approval', 'formatted', 'released']),
  /** The attested key's security level, or null when no attestation was verified. */
  keySecurityLevel: z.enum(['Software', 'TrustedEnvironment', 'StrongBox']).nullable(),
});
export type DeviceRegistrationResponse = z.infer<typeof deviceRegistrationResponseSchema>;
export const ENROLLMENT_SECRET_HEADER = 'x-enrollment-secret';

export const deviceNonceRequestSchema = z.object({ imei1: imei });
export const deviceNonceResponseSchema = z.object({
  status: z.literal('success'),
  /** base64url, single-use, bound to imei1. */
  nonce: z.string(),
  expiresAt: z.string(),
});

/** The client id of a device's MQTT connection: the broker refuses any other for its credential. */
export function deviceClientId(imei1: string): string {
  return `lendlock-device-${imei1}`;
}

/** Error codes of a refused registration (409). */
export const REGISTRATION_CODES = {
  needsApproval: 'REREGISTRATION_NEEDS_APPROVAL',
  imeiInUse: 'IMEI_IN_USE',
} as const;

/** The command that brings one part of a device's state to `value` (desired-state reconcile). */
export function commandForState<K extends keyof DeviceState>(
  key: K,
  value: DeviceState[K],
): { command: RawCommand; options: CommandOptions } | null {
  switch (key) {
    case 'locked':
      return { command: value ? 'LOCK' : 'UNLOCK', options: {} };
    case 'appsBlocked':
      return { command: value ? 'BLOCKAPP' : 'UNBLOCKAPP', options: {} };
    case 'greyed':
      return value
        ? { command: 'GREYAPP', options: { level: value as 'level1' | 'level2' } }
        : { command: 'UNGREYAPP', options: {} };
    case 'wallpaper':
      return { command: value ? 'LOCKWALLPAPER' : 'UNLOCKWALLPAPER', options: {} };
    case 'alarm':
      return { command: value ? 'SETALARM' : 'UNSETALARM', options: {} };
    case 'cameraDisabled':
      return { command: value ? 'DISABLECAMERA' : 'ENABLECAMERA', options: {} };
    case 'credit':
      return { command: value ? 'ENABLECREDIT' : 'REVOKECREDIT', options: {} };
    case 'released':
      return value ? { command: 'RELEASE', options: {} } : null;
    default:
      return null;
  }
}
