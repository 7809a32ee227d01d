/**
 * Configuration from the environment, validated once at start. Every bad value gets its own clear
 * message; nothing else in the server reads `process.env`.
 */
import { isIPv4 } from 'node:net';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isTimeZone, USER_LEVELS, type UserLevel } from '@lendlock/contract';
import { z } from 'zod';
import { DEFAULT_POOL_SIZE } from './db/database';
import { parseDuration } from './lib/duration';

const repoRoot = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

/** The variables written as durations (their defaults are shown as such in docs/configuration.md). */
export const DURATION_VARIABLES = new Set<string>();

const duration = (name: string) => {
  DURATION_VARIABLES.add(name);
  return z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a duration like 8h, 30m, 45s or 1500ms` });
      return z.NEVER;
    }
    return ms;
  });
};

const int = (name: string, min: number, max: number) =>
  z
    .string()
    .regex(/^\d+$/, `${name} must be a whole number`)
    .transform(Number)
    .refine((n) => n >= min && n <= max, `${name} must be between ${min} and ${max}`);

const url = (name: string, protocols: string[]) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.includes(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    `${name} must be a URL starting with ${protocols.map((p) => `${p}//`).join(' or ')}`,
  );

const envSchema = z.object({
  PORT: int('PORT', 0, 65535).default(8080),
  HOST: z.string().min(1).default('localhost'),
  DATA_DIR: z.string().min(1).default(resolve(repoRoot, 'data')),
  DATABASE_URL: url('DATABASE_URL', ['postgres:', 'postgresql:']).optional(),
  DATABASE_OWNER_URL: url('DATABASE_OWNER_URL', ['postgres:', 'postgresql:']).optional(),
  DATABASE_POOL_SIZE: int('DATABASE_POOL_SIZE', 1, 500).default(DEFAULT_POOL_SIZE),
  DATABASE_PREPARED_STATEMENTS: z
    .enum(['on', 'off'], { error: 'DATABASE_PREPARED_STATEMENTS must be on or off' })
    .default('on'),
  MQTT_URL: url('MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']).optional(),
  MQTT_PORT: int('MQTT_PORT', 0, 65535).default(1884),
  MQTT_HOST: z.string().min(1).default('0.0.0.0'),
  MQTT_MAX_PACKET_BYTES: int('MQTT_MAX_PACKET_BYTES', 1024, 268435455).default(65536),
  DEVICE_MQTT_URL: url('DEVICE_MQTT_URL', ['mqtt:', 'mqtts:', 'ws:', 'wss:']).optional(),
  MQTT_SHARED_GROUP: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, 'MQTT_SHARED_GROUP must be letters, digits, - or _')
    .default('lendlock'),
  MQTT_LOADTEST_PASSWORD: z
    .string()
    .min(16, 'MQTT_LOADTEST_PASSWORD must be at least 16 characters')
    .optional(),
  ENROLLMENT_SECRET: z.string().min(16, 'ENROLLMENT_SECRET must be at least 16 characters').optional(),
  DEVICE_KEY: z
    .enum(['optional', 'required'], { error: 'DEVICE_KEY must be optional or required' })
    .default('optional'),
  DEVICE_ATTESTATION: z
    .enum(['off', 'record', 'require'], { error: 'DEVICE_ATTESTATION must be off, record or require' })
    .default('record'),
  ATTESTATION_ROOTS: z.string().min(1).optional(),
  ATTESTATION_PACKAGE_NAME: z
    .string()
    .regex(
      /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/,
      'ATTESTATION_PACKAGE_NAME must be an Android package name like com.example.agent',
    )
    .optional(),
  ATTESTATION_SIGNATURE_DIGESTS: z
    .string()
    .transform((value) => value.split(',').map((digest) => digest.trim().replace(/:/g, '').toLowerCase()))
    .refine(
      (digests) => digests.every((digest) => /^[0-9a-f]{64}$/.test(digest)),
      'ATTESTATION_SIGNATURE_DIGESTS must be SHA-256 digests (64 hex digits, colons allowed), separated by commas',
    )
    .optional(),
  ATTESTATION_STATUS_FILE: z.string().min(1).optional(),
  REREGISTRATION_APPROVAL_WINDOW: duration('REREGISTRATION_APPROVAL_WINDOW').default(24 * 3_600_000),
  REGISTRATION_NONCE_TTL: duration('REGISTRATION_NONCE_TTL').default(5 * 60_000),
  REGISTRATION_MAX_PER_ADDRESS: int('REGISTRATION_MAX_PER_ADDRESS', 1, 1_000_000).default(1000),
  MQTT_DYNSEC: z.enum(['on', 'off'], { error: 'MQTT_DYNSEC must be on or off' }).default('off'),
  MQTT_ALLOW_ANONYMOUS: z
    .enum(['on', 'off'], { error: 'MQTT_ALLOW_ANONYMOUS must be on or off' })
    .default('off'),
  WEBHOOK_ALLOW_PRIVATE: z
    .enum(['on', 'off'], { error: 'WEBHOOK_ALLOW_PRIVATE must be on or off' })
    .default('off'),
  WEBHOOK_OFFLINE_AFTER: duration('WEBHOOK_OFFLINE_AFTER').default(15 * 60_000),
  WEBHOOK_RETRY_FIRST: duration('WEBHOOK_RETRY_FIRST').default(5_000),
  WEBHOOK_TIMEOUT: duration('WEBHOOK_TIMEOUT').default(10_000),
  COMMAND_TTL: duration('COMMAND_TTL').default(72 * 3_600_000),
  COMMAND_RESEND_AFTER: duration('COMMAND_RESEND_AFTER').default(30_000),
  DISPATCH_INTERVAL: duration('DISPATCH_INTERVAL').default(2_000),
  ENVELOPE_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'ENVELOPE_KEY must be 32 bytes written as base64')
    .optional(),
  SESSION_TTL: duration('SESSION_TTL').default(8 * 3_600_000),
  SESSION_IDLE_TIMEOUT: duration('SESSION_IDLE_TIMEOUT')
    .refine((ms) => ms >= 2 * 60_000, 'SESSION_IDLE_TIMEOUT must be at least 2m')
    .default(30 * 60_000),
  PRODUCT_LABEL: z.string().min(1).max(60).default('Lendlock'),
  ALLOWED_EMAIL_DOMAINS: z
    .string()
    .transform((v) =>
      v
        .split(',')
        .map((d) => d.trim().toLowerCase())
        .filter(Boolean),
    )
    .refine((list) => list.length > 0, 'ALLOWED_EMAIL_DOMAINS must list at least one domain')
    .refine(
      (list) => list.every((d) => /^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(d)),
      'ALLOWED_EMAIL_DOMAINS must be a comma-separated list of domains like lendlock.com',
    )
    .default(['lendlock.com', 'lendlock.in']),
  PASSWORD_MIN_LENGTH: int('PASSWORD_MIN_LENGTH', 8, 64).default(12),
  LOGIN_MAX_FAILURES_PER_ACCOUNT: int('LOGIN_MAX_FAILURES_PER_ACCOUNT', 1, 1000).default(5),
  LOGIN_MAX_FAILURES_PER_ADDRESS: int('LOGIN_MAX_FAILURES_PER_ADDRESS', 1, 100000).default(30),
  LOGIN_THROTTLE_WINDOW: duration('LOGIN_THROTTLE_WINDOW').default(15 * 60_000),
  MFA_REQUIRED_LEVELS: z
    .string()
    .transform((v) =>
      v.trim().toLowerCase() === 'none'
        ? []
        : v
            .split(',')
            .map((level) => level.trim().toUpperCase())
            .filter(Boolean),
    )
    .refine(
      (list) => list.every((level) => (USER_LEVELS as readonly string[]).includes(level)),
      `MFA_REQUIRED_LEVELS must be none or a comma-separated list of ${USER_LEVELS.join(', ')}`,
    )
    .transform((list) => [...new Set(list)] as UserLevel[])
    .default(['ADMIN', 'SUPERADMIN']),
  SECRETS_KEY: z
    .string()
    .refine((v) => Buffer.from(v, 'base64').length === 32, 'SECRETS_KEY must be 32 bytes written as base64')
    .optional(),
  AUDIT_ANCHOR_KEY: z
    .string()
    .refine(
      (v) => Buffer.from(v, 'base64').length === 32,
      'AUDIT_ANCHOR_KEY must be 32 bytes written as base64',
    )
    .optional(),
  AUDIT_ANCHOR_INTERVAL: duration('AUDIT_ANCHOR_INTERVAL').default(60_000),
  MFA_LOCK_AFTER: int('MFA_LOCK_AFTER', 1, 1000).default(20),
  MFA_LOCK_WINDOW: duration('MFA_LOCK_WINDOW').default(24 * 3_600_000),
  MFA_SECRET_KEY: z
    .string()
    .refine(
      (v) => Buffer.from(v, 'base64').length === 32,
      'MFA_SECRET_KEY must be 32 bytes written as base64',
    )
    .optional(),
  WEBHOOK_SECRET_KEY: z
    .string()
    .refine(
      (v) => Buffer.from(v, 'base64').length === 32,
      'WEBHOOK_SECRET_KEY must be 32 bytes written as base64',
    )
    .optional(),
  TRUST_PROXY: z
    .string()
    .refine(
      (v) =>
        /^(true|false|\d{1,2})$/.test(v) ||
        v.split(',').every((part) => /^[0-9a-fA-F.:/]+$/.test(part.trim())),
      'TRUST_PROXY must be false, true, a number of proxy hops, or a comma-separated list of proxy addresses/CIDRs',
    )
    .transform((v): boolean | number | string =>
      v === 'true' ? true : v === 'false' ? false : /^\d+$/.test(v) ? Number(v) : v,
    )
    .default(false),
  BOOTSTRAP_SUPERADMIN_EMAIL: z.email('BOOTSTRAP_SUPERADMIN_EMAIL must be an email address').optional(),
  BOOTSTRAP_SUPERADMIN_PASSWORD: z
    .string()
    .min(8, 'BOOTSTRAP_SUPERADMIN_PASSWORD must be at least 8 characters')
    .optional(),
  SMTP_URL: url('SMTP_URL', ['smtp:', 'smtps:']).optional(),
  MAIL_FROM: z.string().min(3).default('Lendlock <no-reply@lendlock.local>'),
  PUBLIC_URL: url('PUBLIC_URL', ['http:', 'https:']).default('http://localhost:8080'),
  DEMO_DATA: z.enum(['auto', 'on', 'off'], { error: 'DEMO_DATA must be auto, on or off' }).default('auto'),
  CLIENT_CODE: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,40}$/, 'CLIENT_CODE must be 1-40 letters, digits, - or _')
    .default('LENDLOCK'),
  DEMO_DEVICES: int('DEMO_DEVICES', 1, 20000).default(300),
  WEB_DIST: z.string().min(1).default(resolve(repoRoot, 'apps/web/dist')),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  AUTHZ_CHECK: z
    .enum(['off', 'log', 'enforce'], { error: 'AUTHZ_CHECK must be off, log or enforce' })
    .default('off'),
  SHUTDOWN_TIMEOUT: duration('SHUTDOWN_TIMEOUT').default(10_000),
  UPLOAD_MAX_MB: int('UPLOAD_MAX_MB', 1, 2048).default(100),
  UPLOAD_RETENTION: duration('UPLOAD_RETENTION').default(90 * 86_400_000),
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  METRICS_PUBLIC: z.enum(['on', 'off'], { error: 'METRICS_PUBLIC must be on or off' }).default('off'),
  API_DOCS: z.enum(['on', 'off'], { error: 'API_DOCS must be on or off' }).default('on'),
  KEY_RATE_LIMIT: int('KEY_RATE_LIMIT', 1, 1_000_000).default(600),
  REPORT_TIMEZONE: z
    .string()
    .refine(isTimeZone, 'REPORT_TIMEZONE must be an IANA time zone such as Asia/Kolkata or UTC')
    .default('UTC'),
  BATCH_MAX_ROWS: int('BATCH_MAX_ROWS', 1, 10_000_000).default(1_000_000),
  BATCH_WORKERS: int('BATCH_WORKERS', 1, 32).default(2),
  COLLECTIONS_WORKERS: z
    .enum(['on', 'off'], { error: 'COLLECTIONS_WORKERS must be on or off' })
    .default('on'),
  COLLECTIONS_WATCH_INTERVAL: duration('COLLECTIONS_WATCH_INTERVAL').default(2_000),
  COLLECTIONS_RUN_CHECK_INTERVAL: duration('COLLECTIONS_RUN_CHECK_INTERVAL').default(30_000),
});

export type Config = {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  /** Migrations (and the application role's grants) run as this role; the application as DATABASE_URL's. */
  databaseOwnerUrl: string | undefined;
  databasePoolSize: number;
  /** Name parameterised queries (server-side prepared statements); off behind a pooler that cannot. */
  databasePreparedStatements: boolean;
  mqttUrl: string | undefined;
  mqttPort: number;
  mqttHost: string;
  /** The largest MQTT packet a client may send to the embedded broker (its connection is closed). */
  mqttMaxPacketBytes: number;
  deviceMqttUrl: string | undefined;
  mqttSharedGroup: string;
  mqttLoadTestPassword: string | undefined;
  enrollmentSecret: string | undefined;
  deviceKey: 'optional' | 'required';
  deviceAttestation: 'off' | 'record' | 'require';
  /** A PEM file of trusted attestation roots; by default Google's (attestation-roots.pem). */
  attestationRoots: string | undefined;
  /** The agent's package name an attestation must name; unset: not checked. */
  attestationPackageName: string | undefined;
  /** The SHA-256 digests (lowercase hex) of the agent's signing certificates; empty: not checked. */
  attestationSignatureDigests: string[];
  /** A revocation status list in Google's format; unset: not consulted. */
  attestationStatusFile: string | undefined;
  reregistrationApprovalWindowMs: number;
  registrationNonceTtlMs: number;
  registrationMaxPerAddress: number;
  /** Provision each device's client on the external broker (Mosquitto's dynamic security plugin). */
  mqttDynsec: boolean;
  /** Start against an external broker that admits anonymous clients (tests and benchmarks only). */
  mqttAllowAnonymous: boolean;
  /** Webhooks may go to loopback, link-local and private addresses (and plain http): tests only. */
  webhookAllowPrivate: boolean;
  /** A device offline this long is announced to webhooks (device.offline); 0: never. */
  webhookOfflineAfterMs: number;
  webhookRetryFirstMs: number;
  webhookTimeoutMs: number;
  commandTtlMs: number;
  commandResendAfterMs: number;
  dispatchIntervalMs: number;
  envelopeKey: string | undefined;
  sessionTtlMs: number;
  /** A session unused this long ends (besides `sessionTtlMs`). */
  sessionIdleTimeoutMs: number;
  productLabel: string;
  allowedEmailDomains: string[];
  passwordMinLength: number;
  loginMaxFailuresPerAccount: number;
  loginMaxFailuresPerAddress: number;
  loginThrottleWindowMs: number;
  /** The levels that must sign in with a second factor (TOTP); the others may turn it on. */
  mfaRequiredLevels: UserLevel[];
  /** Seals TOTP secrets at rest; unset: a key generated once and kept in the database (settings). */
  mfaSecretKey: string | undefined;
  /** Wrong second-factor codes within `mfaLockWindowMs` that lock an account's second factor. */
  mfaLockAfter: number;
  mfaLockWindowMs: number;
  /** Seals webhook signing secrets at rest; unset: a key generated once and kept (sealed) in settings. */
  webhookSecretKey: string | undefined;
  /** Seals the secrets kept in `settings`; unset: DATA_DIR/secrets.key, generated once. */
  secretsKey: string | undefined;
  /** MACs the audit chain's anchors; unset: DATA_DIR/audit-anchor.key, generated once. */
  auditAnchorKey: string | undefined;
  /** At most one anchor of the audit chain's head per this long (when it moved). */
  auditAnchorIntervalMs: number;
  /** false, true (every hop), a hop count, or trusted proxy addresses/CIDRs (Fastify's trustProxy). */
  trustProxy: boolean | number | string;
  bootstrapSuperadminEmail: string | undefined;
  bootstrapSuperadminPassword: string | undefined;
  smtpUrl: string | undefined;
  mailFrom: string;
  publicUrl: string;
  demoData: 'auto' | 'on' | 'off';
  demoDevices: number;
  clientCode: string;
  webDist: string;
  logLevel: string;
  /** A signed-in request answered without an authority decision: ignored, logged, or refused (authz/decisions.ts). */
  authorizationCheck: 'off' | 'log' | 'enforce';
  shutdownTimeoutMs: number;
  uploadMaxBytes: number;
  /** How long an uploaded batch file is kept before the uploads sweep deletes it. */
  uploadRetentionMs: number;
  batchMaxRows: number;
  reportTimeZone: string;
  keyRateLimitPerMinute: number;
  metricsToken: string | undefined;
  /** Serve Swagger UI and the OpenAPI document at /docs. */
  apiDocs: boolean;
  batchWorkers: number;
  /** The collections daily run and payment watcher run on this instance (modules/collections/engine.ts). */
  collectionsWorkers: boolean;
  collectionsWatchMs: number;
  collectionsRunCheckMs: number;
};

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Whether an address to listen on is only reachable from this machine (localhost, 127.0.0.0/8, ::1). */
export function isLoopbackHost(host: string): boolean {
  const address = host.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (address === 'localhost' || address === '::1' || address === '0:0:0:0:0:0:0:1') return true;
  const v4 = address.replace(/^::ffff:/, '');
  return isIPv4(v4) && v4.startsWith('127.');
}

/** Reads the configuration from an environment; throws ConfigError listing every bad value. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(
    Object.keys(envSchema.shape).flatMap((key) => {
      const value = env[key];
      return value === undefined || value === '' ? [] : [[key, value]];
    }),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const key = String(issue.path[0] ?? '');
        const shown = key in present ? ` (got ${JSON.stringify(present[key])})` : '';
        const message = issue.message.startsWith(key) ? issue.message : `${key}: ${issue.message}`;
        return `${message}${['BOOTSTRAP_SUPERADMIN_PASSWORD', 'ENVELOPE_KEY', 'SMTP_URL', 'DATABASE_URL', 'MQTT_URL', 'ENROLLMENT_SECRET', 'MQTT_LOADTEST_PASSWORD', 'METRICS_TOKEN', 'MFA_SECRET_KEY', 'WEBHOOK_SECRET_KEY', 'SECRETS_KEY', 'AUDIT_ANCHOR_KEY', 'DATABASE_OWNER_URL'].includes(key) ? '' : shown}`;
      }),
    );
  }
  const e = parsed.data;
  if (
    e.DEVICE_ATTESTATION === 'require' &&
    (!e.ATTESTATION_PACKAGE_NAME || !e.ATTESTATION_SIGNATURE_DIGESTS)
  ) {
    throw new ConfigError([
      "DEVICE_ATTESTATION=require needs ATTESTATION_PACKAGE_NAME and ATTESTATION_SIGNATURE_DIGESTS: without them any app on a genuine phone could enrol a key (set them to the agent's package name and the SHA-256 digest of its signing certificate)",
    ]);
  }
  if (!isLoopbackHost(e.HOST) && !e.METRICS_TOKEN && e.METRICS_PUBLIC !== 'on') {
    throw new ConfigError([
      `METRICS_TOKEN must be set when HOST (${e.HOST}) is not a loopback address, or anyone who reaches the server could read /metrics: set METRICS_TOKEN (at least 16 characters), or METRICS_PUBLIC=on if something in front keeps /metrics private`,
    ]);
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: resolve(e.DATA_DIR),
    databaseUrl: e.DATABASE_URL,
    databaseOwnerUrl: e.DATABASE_OWNER_URL,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS === 'on',
    mqttUrl: e.MQTT_URL,
    mqttPort: e.MQTT_PORT,
    mqttHost: e.MQTT_HOST,
    mqttMaxPacketBytes: e.MQTT_MAX_PACKET_BYTES,
    deviceMqttUrl: e.DEVICE_MQTT_URL,
    mqttSharedGroup: e.MQTT_SHARED_GROUP,
    mqttLoadTestPassword: e.MQTT_LOADTEST_PASSWORD,
    enrollmentSecret: e.ENROLLMENT_SECRET,
    deviceKey: e.DEVICE_KEY,
    deviceAttestation: e.DEVICE_ATTESTATION,
    attestationRoots: e.ATTESTATION_ROOTS,
    attestationPackageName: e.ATTESTATION_PACKAGE_NAME,
    attestationSignatureDigests: e.ATTESTATION_SIGNATURE_DIGESTS ?? [],
    attestationStatusFile: e.ATTESTATION_STATUS_FILE ? resolve(e.ATTESTATION_STATUS_FILE) : undefined,
    reregistrationApprovalWindowMs: e.REREGISTRATION_APPROVAL_WINDOW,
    registrationNonceTtlMs: e.REGISTRATION_NONCE_TTL,
    registrationMaxPerAddress: e.REGISTRATION_MAX_PER_ADDRESS,
    mqttDynsec: e.MQTT_DYNSEC === 'on',
    mqttAllowAnonymous: e.MQTT_ALLOW_ANONYMOUS === 'on',
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'on',
    webhookOfflineAfterMs: e.WEBHOOK_OFFLINE_AFTER,
    webhookRetryFirstMs: e.WEBHOOK_RETRY_FIRST,
    webhookTimeoutMs: e.WEBHOOK_TIMEOUT,
    commandTtlMs: e.COMMAND_TTL,
    commandResendAfterMs: e.COMMAND_RESEND_AFTER,
    dispatchIntervalMs: e.DISPATCH_INTERVAL,
    envelopeKey: e.ENVELOPE_KEY,
    sessionTtlMs: e.SESSION_TTL,
    sessionIdleTimeoutMs: e.SESSION_IDLE_TIMEOUT,
    productLabel: e.PRODUCT_LABEL,
    allowedEmailDomains: e.ALLOWED_EMAIL_DOMAINS,
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    loginMaxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    loginMaxFailuresPerAddress: e.LOGIN_MAX_FAILURES_PER_ADDRESS,
    loginThrottleWindowMs: e.LOGIN_THROTTLE_WINDOW,
    mfaRequiredLevels: e.MFA_REQUIRED_LEVELS,
    mfaSecretKey: e.MFA_SECRET_KEY,
    mfaLockAfter: e.MFA_LOCK_AFTER,
    mfaLockWindowMs: e.MFA_LOCK_WINDOW,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    secretsKey: e.SECRETS_KEY,
    auditAnchorKey: e.AUDIT_ANCHOR_KEY,
    auditAnchorIntervalMs: e.AUDIT_ANCHOR_INTERVAL,
    trustProxy: e.TRUST_PROXY,
    bootstrapSuperadminEmail: e.BOOTSTRAP_SUPERADMIN_EMAIL,
    bootstrapSuperadminPassword: e.BOOTSTRAP_SUPERADMIN_PASSWORD,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    publicUrl: e.PUBLIC_URL.replace(/\/+$/, ''),
    demoData: e.DEMO_DATA,
    demoDevices: e.DEMO_DEVICES,
    clientCode: e.CLIENT_CODE,
    webDist: resolve(e.WEB_DIST),
    logLevel: e.LOG_LEVEL,
    authorizationCheck: e.AUTHZ_CHECK,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT,
    uploadMaxBytes: e.UPLOAD_MAX_MB * 1024 * 1024,
    uploadRetentionMs: e.UPLOAD_RETENTION,
    batchMaxRows: e.BATCH_MAX_ROWS,
    reportTimeZone: e.REPORT_TIMEZONE,
    keyRateLimitPerMinute: e.KEY_RATE_LIMIT,
    metricsToken: e.METRICS_TOKEN,
    apiDocs: e.API_DOCS === 'on',
    batchWorkers: e.BATCH_WORKERS,
    collectionsWorkers: e.COLLECTIONS_WORKERS === 'on',
    collectionsWatchMs: e.COLLECTIONS_WATCH_INTERVAL,
    collectionsRunCheckMs: e.COLLECTIONS_RUN_CHECK_INTERVAL,
  };
}

/** Every variable the server reads. */
export const ENV_VARIABLES = Object.keys(envSchema.shape) as EnvVariable[];

/** The variables' defaults, as the server applies them (durations in milliseconds). */
export const ENV_DEFAULTS: Record<string, unknown> = envSchema.parse({});

type EnvVariable = keyof typeof envSchema.shape;

/** The sections of docs/configuration.md, in order. */
export const ENV_GROUPS = {
  server: 'Server',
  database: 'Database',
  channel: 'Device channel (MQTT)',
  registration: 'Device registration',
  commands: 'Commands, batches and uploads',
  security: 'Accounts, sign-in and access',
  keys: 'Keys at rest',
  mail: 'Mail',
  webhooks: 'Webhooks',
  collections: 'Collections',
  metrics: 'Metrics',
  demo: 'Demo',
} as const;

/**
 * What each variable does, for docs/configuration.md (`npm run docs:config`; a test keeps the file
 * current). `unset` says what happens without a variable that has no default; `note` follows a default.
 * Links are relative to docs/.
 */
export const ENV_DOCS: Record<
  EnvVariable,
  { group: keyof typeof ENV_GROUPS; description: string; unset?: string; note?: string }
> = {
  PORT: {
    group: 'server',
    description: 'HTTP port (0–65535).',
  },
  HOST: {
    group: 'server',
    description:
      'Address to listen on. The default answers only on this machine (its loopback addresses); `0.0.0.0` listens on every interface. Beyond loopback the server refuses to start without `METRICS_TOKEN` unless `METRICS_PUBLIC=on`.',
  },
  DATA_DIR: {
    group: 'server',
    description:
      "Local files: the embedded database (`pgdata/`, unused with `DATABASE_URL`), the mail outbox (`outbox/`), uploaded batch files (`uploads/`) and the demo fleet's credentials (`demo-fleet.json`). A relative value is relative to the working directory (`apps/server` under `npm start`).",
  },
  DATABASE_URL: {
    group: 'database',
    unset: 'unset: embedded PGlite in `DATA_DIR`',
    description:
      'PostgreSQL connection URL (`postgres://…` or `postgresql://…`). See [operations](operations.md#postgresql).',
  },
  DATABASE_OWNER_URL: {
    group: 'database',
    unset: "unset: migrations run as `DATABASE_URL`'s role",
    description:
      "PostgreSQL URL of the owner role that runs the migrations (and grants the application role what it needs) at start; `DATABASE_URL` then signs in as a role that owns nothing, so the application cannot disable the audit log's triggers. See [operations](operations.md#database-roles).",
  },
  DATABASE_POOL_SIZE: {
    group: 'database',
    description:
      'Maximum PostgreSQL connections per server instance (1–500), besides 4 kept for single commands.',
  },
  DATABASE_PREPARED_STATEMENTS: {
    group: 'database',
    description:
      'PostgreSQL: run parameterised queries as server-side prepared statements (`on` or `off`). Turn off only behind a connection pooler in transaction mode that cannot keep them (PgBouncer before 1.21).',
  },
  MQTT_URL: {
    group: 'channel',
    unset: 'unset: the embedded broker',
    description:
      "External MQTT broker (`mqtt://user:pass@host:1883`, `mqtts://`, `ws://`, `wss://`). No embedded broker is started. The server connects with the URL's credentials (MQTT 5) and shares its subscriptions with the other instances (`MQTT_SHARED_GROUP`). The broker must authenticate each device and confine it to its topics: see [operations](operations.md#the-mqtt-broker).",
  },
  MQTT_PORT: {
    group: 'channel',
    description:
      'Port of the embedded broker (plain MQTT over TCP; 1884 so it never collides with a broker on 1883). `0` picks a free port. Unused with `MQTT_URL`.',
  },
  ENVELOPE_KEY: {
    group: 'keys',
    unset: 'unset: generated once, sealed in the database',
    description:
      'AES-256 key of the request envelope: 32 bytes written as base64 (`openssl rand -base64 32`). See [docs/adr/0002](adr/0002-sessions-and-envelope.md).',
  },
  SECRETS_KEY: {
    group: 'keys',
    unset: 'unset: generated once into `DATA_DIR/secrets.key`',
    description:
      'AES-256-GCM key (32 bytes, base64) that seals the secrets the server keeps in the database (`settings`: the generated envelope and MFA keys). Set it, the same on every instance, with PostgreSQL; a wrong key stops the start; `npm run cli -- secrets rotate` re-seals under a new one. See [operations](operations.md#secrets-at-rest).',
  },
  AUDIT_ANCHOR_KEY: {
    group: 'keys',
    unset: 'unset: generated once into `DATA_DIR/audit-anchor.key`',
    description:
      "HMAC-SHA256 key (32 bytes, base64) of the audit chain's anchors: the chain's head, published as a log line, metrics and a row, so that `npm run cli -- audit verify` detects a deleted tail or a rewritten chain. Keep it out of the database and its backups; set it, the same on every instance, with PostgreSQL. See [operations](operations.md#audit-anchors).",
  },
  AUDIT_ANCHOR_INTERVAL: {
    group: 'keys',
    description:
      "At most one anchor of the audit chain's head per this long, when the head moved (and one more when an instance stops): rows deleted after the last anchor kept outside are not detectable, so this is the window.",
  },
  SESSION_TTL: {
    group: 'security',
    description: 'Absolute lifetime of a console session. This is the time shown in the red notice.',
  },
  SESSION_IDLE_TIMEOUT: {
    group: 'security',
    description:
      'A console session unused this long ends (at least 2m), besides `SESSION_TTL`: its next call is refused with 401 and `reason` `idle`. Each call refreshes it (recorded at most once a minute, so a session ends within a minute after this). The console warns a minute before with a Stay signed in button. Integrator API keys are not sessions and are not affected. See [operations](operations.md#sessions).',
  },
  PRODUCT_LABEL: {
    group: 'server',
    description: "Name shown in the console's top bar, sign-in card and page titles (1–60 characters).",
  },
  ALLOWED_EMAIL_DOMAINS: {
    group: 'security',
    description:
      'Comma-separated email domains allowed for console users. The first is also used for the bootstrap and demo accounts.',
  },
  PASSWORD_MIN_LENGTH: {
    group: 'security',
    description:
      'Minimum password length in characters (8–64), for new users, resets, the CLI and the bootstrap SUPERADMIN. No composition rules; passwords on the shipped list of 195,478 breached and common passwords are refused. See [operations](operations.md#passwords).',
  },
  LOGIN_MAX_FAILURES_PER_ACCOUNT: {
    group: 'security',
    description:
      'Failed sign-ins allowed per account from one client address within the window. Across addresses an account is throttled at ten times this, counted apart for each network its owner signed in from, so that a flood cannot lock the owner out ([ADR 0008](adr/0008-account-lockout.md)).',
  },
  LOGIN_MAX_FAILURES_PER_ADDRESS: {
    group: 'security',
    description:
      'Failed sign-ins allowed from one client address, over all accounts, within the window; also the device registrations with a wrong enrollment secret allowed from one address.',
  },
  LOGIN_THROTTLE_WINDOW: {
    group: 'security',
    description: 'Length of the login-throttling window (and of the enrollment-secret throttling).',
  },
  MFA_REQUIRED_LEVELS: {
    group: 'security',
    description:
      'Levels that must sign in with a second factor (TOTP): comma-separated `USER`, `ADMIN`, `SUPERADMIN`, or `none`. Such an account without it is taken to set it up after its password, and its session can do nothing else until it has. Other levels may turn it on. See [docs/operations.md](operations.md#two-factor-authentication-mfa).',
  },
  MFA_LOCK_AFTER: {
    group: 'security',
    description:
      "Wrong second-factor codes (TOTP or recovery) of one account within `MFA_LOCK_WINDOW` that lock its second factor: every further code, the right one too, is refused with 403 `MFA_LOCKED` until an ADMIN or SUPERADMIN resets the account's MFA. The sign-in throttle caps guesses per 15 minutes; this caps them over days. See [operations](operations.md#two-factor-authentication-mfa).",
  },
  MFA_LOCK_WINDOW: {
    group: 'security',
    description:
      'The window of `MFA_LOCK_AFTER`: it opens at a wrong code when none is open, and the count starts again once it has passed. A right code does not clear the count.',
  },
  MFA_SECRET_KEY: {
    group: 'keys',
    unset: 'unset: generated once, sealed in the database',
    description:
      'AES-256-GCM key (32 bytes, base64) that seals the TOTP secrets at rest. Keep it outside the database (a secret store) so that a copy of the database alone hands out no second factor. Changing it voids every enrolment: each account must then be reset.',
  },
  WEBHOOK_ALLOW_PRIVATE: {
    group: 'webhooks',
    description:
      '`on` lets webhooks go to loopback, private and link-local addresses and to plain `http://` URLs (tests, or receivers on a private network by choice). Off, a webhook URL must be `https://` and resolve only to public addresses, checked again at every connection.',
  },
  WEBHOOK_SECRET_KEY: {
    group: 'keys',
    unset: 'unset: generated once, kept sealed in the database',
    description:
      "AES-256-GCM key (32 bytes, base64) that seals each webhook endpoint's signing secret at rest. Changing it voids every endpoint's secret: delete and add the endpoints again.",
  },
  WEBHOOK_OFFLINE_AFTER: {
    group: 'webhooks',
    description:
      'How long an enrolled device must be offline before webhooks subscribed to `device.offline` hear of it (once per disconnection). See [operations](operations.md#webhooks).',
  },
  WEBHOOK_RETRY_FIRST: {
    group: 'webhooks',
    description:
      "Delay before a failed webhook delivery's first retry; each next one doubles (±25 % jitter), at most an hour apart, for 24 hours.",
  },
  WEBHOOK_TIMEOUT: {
    group: 'webhooks',
    description: 'How long a webhook receiver has to answer one attempt.',
  },
  TRUST_PROXY: {
    group: 'security',
    description:
      'Where the client address comes from: `false` (the TCP peer), `true` (the left-most `X-Forwarded-For` address), a number of proxy hops, or a comma-separated list of trusted proxy addresses/CIDRs. See [operations](operations.md#several-instances-behind-a-load-balancer).',
  },
  BOOTSTRAP_SUPERADMIN_EMAIL: {
    group: 'security',
    unset: 'unset: `superadmin@<first allowed domain>`',
    description: 'Email of the first SUPERADMIN, used on an empty database only.',
  },
  BOOTSTRAP_SUPERADMIN_PASSWORD: {
    group: 'security',
    unset: 'unset: generated and printed',
    description:
      'Password of the first SUPERADMIN (at least 8 characters), used on an empty database only. Never printed.',
  },
  SMTP_URL: {
    group: 'mail',
    unset: 'unset: mail goes to `DATA_DIR/outbox/`',
    description:
      'SMTP server for outgoing mail (password reset links): `smtp://user:pass@host:587` or `smtps://…`. Without it, each mail is written as an `.eml` file and the reset link is logged.',
  },
  MAIL_FROM: {
    group: 'mail',
    description: 'Sender of outgoing mail.',
  },
  PUBLIC_URL: {
    group: 'server',
    description:
      'Address at which users reach the console. Reset links in mails are built on it (`<PUBLIC_URL>/resetPassword/<token>`). Set it in production.',
  },
  DEMO_DATA: {
    group: 'demo',
    description:
      "`on`, `off` or `auto` (on with the embedded database, off with `DATABASE_URL`). When on, the first start on an empty database creates the demo ADMIN and USER, puts most of the fleet's IMEIs in the financed list and lays down a few weeks of history; the simulated fleet then runs in-process on every start whose `DATA_DIR` holds its credentials.",
  },
  DEMO_DEVICES: {
    group: 'demo',
    description: "Size of the demo's simulated fleet (1–20000).",
  },
  CLIENT_CODE: {
    group: 'server',
    description:
      'The fixed client code the dynamic action table of retailer users sends (`clientof`); the server refuses any other.',
  },
  WEB_DIST: {
    group: 'server',
    description: 'Directory of the built console that the server serves.',
  },
  LOG_LEVEL: {
    group: 'server',
    description: '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`.',
  },
  AUTHZ_CHECK: {
    group: 'security',
    description:
      '`log` or `enforce`: a signed-in request answered without a decision of the authority module (tenancy.md) is logged, or refused with a 500; the tests run with `enforce`.',
  },
  SHUTDOWN_TIMEOUT: {
    group: 'server',
    description: 'How long a graceful shutdown may take before the process exits with code 1.',
  },
  MQTT_HOST: {
    group: 'channel',
    description:
      'Address the embedded broker listens on. Devices on other machines need it reachable. Unused with `MQTT_URL`.',
  },
  MQTT_MAX_PACKET_BYTES: {
    group: 'channel',
    note: '64 KiB',
    description:
      "Largest MQTT packet, in bytes, any client may send to the embedded broker (1024–268435455). A client that announces a larger one is disconnected before any of it is buffered. Commands are at most ~3 KB, acknowledgements ~1 KB. Unused with `MQTT_URL` (set the broker's own limit).",
  },
  DEVICE_MQTT_URL: {
    group: 'channel',
    unset: 'unset: `MQTT_URL` without its credentials, or `mqtt://localhost:<embedded broker port>`',
    description:
      "The broker address handed to devices at registration. Set it whenever devices are not on the server's machine.",
  },
  MQTT_SHARED_GROUP: {
    group: 'channel',
    description:
      'Shared-subscription group of the server instances on an external broker (`$share/<group>/…`): each device message is handled by one instance.',
  },
  MQTT_LOADTEST_PASSWORD: {
    group: 'channel',
    unset: 'unset: no load-test identity',
    description:
      "Enables the embedded broker's `lendlock-loadtest` identity (at least 16 characters), which may use every device topic: for benchmarks that multiplex many simulated devices over few connections. Leave it unset in production.",
  },
  ENROLLMENT_SECRET: {
    group: 'registration',
    unset: 'unset',
    description:
      'An enrollment secret from the environment (at least 16 characters), accepted beside the named secrets a SUPERADMIN adds (`npm run cli -- enrollment-secret add`, or `POST /api/v2/enrollmentSecrets`). Agents send it as `X-Enrollment-Secret`. Never stored. With neither, no agent can register (the demo adds its own `demo` secret at each start).',
  },
  DEVICE_KEY: {
    group: 'registration',
    description:
      "`required`: every registration must carry a device key (`publicKey`, EC P-256). `optional` also admits agents of before device keys; such a device can only register again with an operator's approval.",
  },
  DEVICE_ATTESTATION: {
    group: 'registration',
    description:
      "Android key attestation: `off` ignores it; `record` verifies a chain when an agent sends one and records its verdict (a chain that fails any check is recorded as not attested, with the reasons on Device Details and in the audit log); `require` enrols only keys whose attestation passes every check: a chain to the roots, secure hardware (not Software), a locked bootloader and a Verified boot, the agent's package and signing certificate, and no revoked certificate. `require` needs `ATTESTATION_PACKAGE_NAME` and `ATTESTATION_SIGNATURE_DIGESTS`.",
  },
  ATTESTATION_ROOTS: {
    group: 'registration',
    unset:
      "unset: Google's hardware attestation roots (`apps/server/src/modules/devices/attestation-roots.pem`)",
    description: 'A PEM file of the roots an attestation chain must end at.',
  },
  ATTESTATION_PACKAGE_NAME: {
    group: 'registration',
    unset: 'unset: not checked',
    description:
      "The agent's Android package name: an attestation's `attestationApplicationId` must name it, or the key was made by another app. Required with `DEVICE_ATTESTATION=require`.",
  },
  ATTESTATION_SIGNATURE_DIGESTS: {
    group: 'registration',
    unset: 'unset: not checked',
    description:
      "The SHA-256 digests of the agent's signing certificates (64 hex digits each, colons allowed, as `keytool -printcert` or `apksigner verify --print-certs` shows them), separated by commas; list the old and the new one while a signing key rotates. Every digest an attestation's `attestationApplicationId` carries must be listed. Required with `DEVICE_ATTESTATION=require`.",
  },
  ATTESTATION_STATUS_FILE: {
    group: 'registration',
    unset: 'unset: not consulted',
    description:
      "A JSON file holding Google's attestation key revocation status list (the answer of https://android.googleapis.com/attestation/status). A chain with a certificate on it is refused, and while the file is missing or unreadable every chain is. Read again when it changes; refresh it with `npm run cli -- attestation-status refresh` (daily, from cron).",
  },
  REREGISTRATION_APPROVAL_WINDOW: {
    group: 'registration',
    description:
      "How long an operator's approval of a re-registration request admits one registration of that IMEI.",
  },
  REGISTRATION_NONCE_TTL: {
    group: 'registration',
    description: 'How long a registration nonce (`POST /device/v1/nonce`) stays valid. Each is single-use.',
  },
  REGISTRATION_MAX_PER_ADDRESS: {
    group: 'registration',
    description:
      "Registrations (and, apart, nonces) with a right enrollment secret allowed from one address in `LOGIN_THROTTLE_WINDOW`; then 429 with `Retry-After`. Loopback addresses (the demo fleet, `npm run sim` on the server's machine) are not limited.",
  },
  MQTT_DYNSEC: {
    group: 'channel',
    description:
      "`on`: with `MQTT_URL`, provision each device's own client and topics on Mosquitto through its dynamic security plugin, as the identity in `MQTT_URL` ([operations](operations.md#the-mqtt-broker)).",
  },
  MQTT_ALLOW_ANONYMOUS: {
    group: 'channel',
    description:
      "The server refuses to start against an external broker that admits anonymous clients (any of them could read and answer every device's commands) unless this is `on`: for test brokers and benchmarks only.",
  },
  COMMAND_TTL: {
    group: 'commands',
    description:
      'Time to live of one-shot commands (NOTIFY, REBOOT, UPDATE) not yet delivered; then EXPIRED. State commands (lock, release, …) hold until replaced.',
  },
  COMMAND_RESEND_AFTER: {
    group: 'commands',
    description:
      'A command sent to an online device but not acknowledged is sent again after this (devices ignore ids they have executed).',
  },
  DISPATCH_INTERVAL: {
    group: 'commands',
    description:
      'How often each instance sweeps: expires old one-shots, and sends what waits for online devices (resends, commands queued during a broker outage).',
  },
  UPLOAD_MAX_MB: {
    group: 'commands',
    description: 'Largest accepted upload (CSV files), in MB.',
  },
  UPLOAD_RETENTION: {
    group: 'commands',
    description:
      'How long an uploaded batch file is kept; then the uploads sweep deletes it and its history link answers 410 (a duration: `90d`, `12h`).',
  },
  BATCH_MAX_ROWS: {
    group: 'commands',
    description: 'Most data rows a batch CSV may have; a larger file is refused with a clear message.',
  },
  BATCH_WORKERS: {
    group: 'commands',
    description:
      'Batch workers per server instance. Workers of every instance share a batch (rows claimed with `FOR UPDATE SKIP LOCKED`), and no row is processed twice.',
  },
  COLLECTIONS_WORKERS: {
    group: 'collections',
    description:
      "Run the collections daily run and payment watcher on this instance (`off`: this instance only answers the collections API). Several instances may all run them: one takes the day's run at a time (a lease), and each payment is acted on once ([Collections on autopilot](features.md#collections-on-autopilot)).",
  },
  COLLECTIONS_WATCH_INTERVAL: {
    group: 'collections',
    description:
      "How often the payment watcher looks for new payments: an unlock or release on payment goes out within this (plus the command's delivery).",
  },
  COLLECTIONS_RUN_CHECK_INTERVAL: {
    group: 'collections',
    description:
      "How often an instance checks whether the day's collections run is due (after the quiet hours in the lender's zone), not done, and not held by another instance.",
  },
  REPORT_TIMEZONE: {
    group: 'server',
    description:
      'Time zone of a dated call (reports, exports, audit log, dashboard) that sends no `timeZone`: its whole days and exported date-times, e.g. `Asia/Kolkata`.',
  },
  KEY_RATE_LIMIT: {
    group: 'security',
    description:
      'Calls per minute allowed to one integrator API key, counted per server instance; over it, 429 with `Retry-After`.',
  },
  METRICS_TOKEN: {
    group: 'metrics',
    unset: 'unset: `/metrics` open (only allowed on a loopback `HOST`)',
    description:
      'When set (at least 16 characters), `GET /metrics` needs `Authorization: Bearer <token>` (compared in constant time; otherwise 401). Required when `HOST` is not a loopback address, unless `METRICS_PUBLIC=on`. See [operations](operations.md#metrics-and-alerts).',
  },
  METRICS_PUBLIC: {
    group: 'metrics',
    description:
      '`on`: allow an open `/metrics` on a non-loopback `HOST` (something in front, e.g. the load balancer, keeps it private).',
  },
  API_DOCS: {
    group: 'server',
    description: '`off`: no Swagger UI nor OpenAPI document at `/docs` (404).',
  },
};
