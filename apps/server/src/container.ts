/**
 * The composition root: builds every service of the app in dependency order from the configuration and
 * the open database, and returns them as one fully typed object (core/context.ts `AppContext`). Services
 * are classes constructed with their dependencies (the database, options, other services); routes and
 * plugins receive them from here and never the database. The one
 * command time to live (COMMAND_TTL) is the command service's: batches and collections read it from it.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createNodeEnvelopeCodec } from '@lendlock/contract/node';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config';
import type { Database } from './db/database';
import { loadSecretsKey, type SecretsKey } from './lib/secrets-at-rest';
import { anchorKey } from './modules/audit/anchor';
import { AuditSealer } from './modules/audit/sealer';
import { AuditService } from './modules/audit/service';
import { AuthService, type AuthSettings, SessionAuthenticator } from './modules/auth/service';
import { BatchService } from './modules/batches/service';
import { BatchWorker } from './modules/batches/worker';
import { ChannelEndpoint } from './modules/channel/device-channel';
import { CollectionsEngine } from './modules/collections/engine';
import { collectionsServices } from './modules/collections/services';
import { CommandService } from './modules/commands/service';
import { defaultAttestationRootsPath, loadAttestationRoots } from './modules/devices/attestation';
import { attestationChecks } from './modules/devices/attestation-status';
import { IdentityService } from './modules/devices/identity';
import { OfflineAnnouncer } from './modules/devices/offline';
import { type IdentityPolicy, RegistrationService } from './modules/devices/registration';
import { DeviceService } from './modules/devices/service';
import { EnrollmentService } from './modules/enrollment/service';
import { HealthService } from './modules/health/service';
import { KeyService } from './modules/keys/service';
import { LoanService } from './modules/loans/service';
import { createMailer, type Mailer } from './modules/mail/mailer';
import { MailOutbox } from './modules/mail/outbox';
import { MfaService } from './modules/mfa/service';
import { PasswordService } from './modules/password/service';
import { ReportService } from './modules/reports/service';
import { resolveSecretSetting } from './modules/settings/secrets';
import { UserService } from './modules/users/service';
import { DEFAULT_WEBHOOK_TIMING, WebhookDelivery, type WebhookTiming } from './modules/webhooks/delivery';
import { WebhookService } from './modules/webhooks/service';
import { createMetrics } from './plugins/metrics';

export interface ContainerOptions {
  config: Config;
  database: Database;
  /** The app's logger (workers and services log through it). */
  log: FastifyBaseLogger;
  /** Outgoing mail; by default from SMTP_URL or the outbox in DATA_DIR. */
  mailer?: Mailer;
}

/** Every service of the app, built in dependency order. */
export async function buildContainer({ config, database, log, ...options }: ContainerOptions) {
  const { db } = database;
  // Secrets generated once and kept in `settings` are sealed under SECRETS_KEY (or DATA_DIR/secrets.key),
  // loaded only when one is needed; a key that does not open them stops the start (SecretsKeyError).
  let secretsKey: SecretsKey | undefined;
  const secrets = () => {
    secretsKey ??= loadSecretsKey(config.secretsKey, config.dataDir);
    return secretsKey;
  };
  const generatedKey = () => randomBytes(32).toString('base64');
  // TOTP secrets are sealed with it (modules/mfa/secret.ts); MFA_SECRET_KEY keeps it out of the database.
  const mfaSecretKey = await resolveSecretSetting(
    db,
    secrets,
    'mfa_secret_key',
    config.mfaSecretKey,
    generatedKey,
  );
  // Webhook signing secrets are sealed with it (modules/webhooks/service.ts).
  const webhookSecretKey = await resolveSecretSetting(
    db,
    secrets,
    'webhook_secret_key',
    config.webhookSecretKey,
    generatedKey,
  );
  const envelopeKey = await resolveSecretSetting(
    db,
    secrets,
    'envelope_key',
    config.envelopeKey,
    generatedKey,
  );
  const roots =
    config.deviceAttestation === 'off'
      ? null
      : loadAttestationRoots(readFileSync(config.attestationRoots ?? defaultAttestationRootsPath(), 'utf8'));

  const authSettings: AuthSettings = {
    sessionTtlMs: config.sessionTtlMs,
    maxFailuresPerAccount: config.loginMaxFailuresPerAccount,
    maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
    throttleWindowMs: config.loginThrottleWindowMs,
    mfa: {
      requiredLevels: config.mfaRequiredLevels,
      key: Buffer.from(mfaSecretKey, 'base64'),
      issuer: config.productLabel,
      lockAfter: config.mfaLockAfter,
      lockWindowMs: config.mfaLockWindowMs,
    },
  };
  const identityPolicy: IdentityPolicy = {
    deviceKey: config.deviceKey,
    attestation: config.deviceAttestation,
    roots,
    nonceTtlMs: config.registrationNonceTtlMs,
    checks: attestationChecks({
      packageName: config.attestationPackageName ?? null,
      signatureDigests: config.attestationSignatureDigests,
      statusFile: config.attestationStatusFile ?? null,
    }),
  };
  const mailer =
    options.mailer ??
    createMailer({
      smtpUrl: config.smtpUrl,
      from: config.mailFrom,
      outboxDir: join(config.dataDir, 'outbox'),
    });

  const health = new HealthService(database);
  const metrics = createMetrics({ health, log });
  const webhookTiming: WebhookTiming = {
    ...DEFAULT_WEBHOOK_TIMING,
    retryFirstMs: config.webhookRetryFirstMs,
    timeoutMs: config.webhookTimeoutMs,
  };
  const webhooks = new WebhookService({
    db,
    secretKey: Buffer.from(webhookSecretKey, 'base64'),
    allowPrivate: config.webhookAllowPrivate,
    giveUpAfterMs: webhookTiming.giveUpAfterMs,
  });
  const webhookDelivery = new WebhookDelivery({
    db,
    log,
    openSecret: webhooks.openSecret,
    allowPrivate: config.webhookAllowPrivate,
    timing: webhookTiming,
  });
  // Devices offline too long are announced as webhook events (device.offline).
  const offlineAnnouncer = new OfflineAnnouncer({
    db,
    log,
    events: webhookDelivery,
    offlineAfterMs: config.webhookOfflineAfterMs,
    giveUpAfterMs: webhookTiming.giveUpAfterMs,
    pollMs: webhookTiming.pollMs,
  });
  // The one owner of COMMAND_TTL: batches and collections record their commands with its recordOptions.
  const commands = new CommandService({
    db,
    log,
    oneShotTtlMs: config.commandTtlMs,
    resendAfterMs: config.commandResendAfterMs,
    events: webhookDelivery,
  });
  const batchWorker = new BatchWorker({
    db,
    commands,
    log,
    workers: config.batchWorkers,
    events: webhookDelivery,
  });
  const batches = new BatchService({ db, workers: batchWorker });
  const collections = collectionsServices({
    db,
    commands,
    events: webhookDelivery,
    now: () => new Date(),
  });
  // The collections engine counts failed actions in the metrics.
  const collectionsEngine = new CollectionsEngine({
    db,
    commands,
    log,
    events: webhookDelivery,
    watchMs: config.collectionsWatchMs,
    runCheckMs: config.collectionsRunCheckMs,
    failed: metrics.collectionsActionFailed,
  });
  // Bodies wait sealed under the secrets key: a reset link is not readable in the database.
  const mail = new MailOutbox({
    db,
    mailer,
    log,
    failed: metrics.mailFailed,
    sealKey: () => secrets().key,
  });
  const password = new PasswordService({
    db,
    mailer,
    mail,
    publicUrl: config.publicUrl,
    passwordMinLength: config.passwordMinLength,
    log,
  });
  // The identity services, each above what it uses: keys, users (which switch keys off), MFA, sign-in.
  const keys = new KeyService({ db, throttle: authSettings });
  const users = new UserService({
    db,
    rules: { allowedEmailDomains: config.allowedEmailDomains, passwordMinLength: config.passwordMinLength },
  });
  const mfa = new MfaService({
    db,
    settings: authSettings.mfa,
    throttle: authSettings,
    locked: metrics.mfaLocked,
  });
  const auth = new AuthService({ db, settings: authSettings, mfa });

  const enrollment = new EnrollmentService({ db });
  // What the app needs of the device channel once it has started (app.ts starts it).
  const channel = new ChannelEndpoint();
  const registration = new RegistrationService({
    db,
    policy: identityPolicy,
    channel,
    events: webhookDelivery,
    // The enrollment secret and the address's limits admit a registration call (modules/enrollment).
    admit: (secret, address, kind) =>
      enrollment.admitEnrollment(config.enrollmentSecret, secret, address, kind, {
        maxFailures: config.loginMaxFailuresPerAddress,
        maxAdmitted: config.registrationMaxPerAddress,
        windowMs: config.loginThrottleWindowMs,
      }),
  });

  return {
    config,
    database,
    db,
    codec: createNodeEnvelopeCodec(envelopeKey),
    envelopeKey,
    authSettings,
    mailer,
    /** Outgoing mail, queued in the database and sent with retries by every instance (ADR 0008). */
    mail,
    /** What devices are told to connect to and the broker to provision, set when the device channel starts. */
    channel,
    /** Device registration (docs/device-protocol.md §1): enrollment secrets, nonces, device keys, attestation. */
    registration,
    /** A device's key and its re-registration requests on Device Details (modules/devices/identity.ts). */
    identity: new IdentityService(db),
    /** Device reads, the financed list, and the devices' broker credentials the device channel checks. */
    devices: new DeviceService(db),
    /** This instance's Prometheus metrics (plugins/metrics.ts). */
    metrics,
    /** The database's health and figures (modules/health/service.ts). */
    health,
    commands,
    batches,
    /** The batch workers of this instance (modules/batches/worker.ts). */
    batchWorker,
    /** Collections on autopilot: the API's side, and the daily run and payment watcher (modules/collections). */
    collections,
    collectionsEngine,
    /** Webhook endpoints (modules/webhooks/service.ts). */
    webhooks,
    /** Webhook events: written with what caused them, sent with retries by every instance. */
    webhookDelivery,
    /** Devices gone offline, announced to webhooks (modules/devices/offline.ts). */
    offlineAnnouncer,
    /** Loans and payments (modules/loans/service.ts). */
    loans: new LoanService({ db, defaultTimeZone: config.reportTimeZone }),
    /** The audit log's hash chain, sealed in the background within a second (ADR 0009). */
    auditSealer: new AuditSealer({
      db,
      log,
      anchor: {
        key: anchorKey(config.auditAnchorKey, config.dataDir),
        intervalMs: config.auditAnchorIntervalMs,
        published: (anchor) => metrics.auditAnchored(anchor),
      },
    }),
    /** Who a request's credential is (plugins/auth.ts). */
    authenticator: new SessionAuthenticator({ db, idleTimeoutMs: config.sessionIdleTimeoutMs }),
    /** Forgot and reset password (modules/password/service.ts). */
    password,
    audit: new AuditService({ db }),
    auth,
    enrollment,
    keys,
    mfa,
    reports: new ReportService({ db }),
    users,
  };
}
