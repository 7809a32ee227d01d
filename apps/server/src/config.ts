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

const duration = (name: string) =>
  z.string().transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === null) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a duration like 8h, 30m, 45s or 1500ms` });
      return z.NEVER;
    }
    return ms;
  });

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
  /** Seals webhook signing secrets at rest; unset: a key generated once and kept (sealed) in settings. */
  webhookSecretKey: string | undefined;
  /** Seals the secrets kept in `settings`; unset: DATA_DIR/secrets.key, generated once. */
  secretsKey: string | undefined;
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
        return `${message}${['BOOTSTRAP_SUPERADMIN_PASSWORD', 'ENVELOPE_KEY', 'SMTP_URL', 'DATABASE_URL', 'MQTT_URL', 'ENROLLMENT_SECRET', 'MQTT_LOADTEST_PASSWORD', 'METRICS_TOKEN', 'MFA_SECRET_KEY', 'WEBHOOK_SECRET_KEY', 'SECRETS_KEY', 'DATABASE_OWNER_URL'].includes(key) ? '' : shown}`;
      }),
    );
  }
  const e = parsed.data;
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
    productLabel: e.PRODUCT_LABEL,
    allowedEmailDomains: e.ALLOWED_EMAIL_DOMAINS,
    passwordMinLength: e.PASSWORD_MIN_LENGTH,
    loginMaxFailuresPerAccount: e.LOGIN_MAX_FAILURES_PER_ACCOUNT,
    loginMaxFailuresPerAddress: e.LOGIN_MAX_FAILURES_PER_ADDRESS,
    loginThrottleWindowMs: e.LOGIN_THROTTLE_WINDOW,
    mfaRequiredLevels: e.MFA_REQUIRED_LEVELS,
    mfaSecretKey: e.MFA_SECRET_KEY,
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    secretsKey: e.SECRETS_KEY,
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

/** The documented variables (README's table is checked against this list by a test). */
export const ENV_VARIABLES = Object.keys(envSchema.shape);
