/**
 * The app factory: builds a Fastify instance from a configuration and an open database. No module-level
 * state, so tests build as many apps as they like.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import multipart from '@fastify/multipart';
import { createNodeEnvelopeCodec, type NodeEnvelopeCodec } from '@lendlock/contract/node';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import type { Kysely } from 'kysely';
import { registerAuthorizationCheck } from './authz/decisions';
import { ROUTE_POLICIES } from './authz/policies';
import type { Config } from './config';
import type { Database } from './db/database';
import { registerPriorityRequests } from './db/priority';
import type { DB } from './db/types';
import { loadSecretsKey, type SecretsKey } from './lib/secrets-at-rest';
import { auditRoutes } from './modules/audit/routes';
import { AuditSealer } from './modules/audit/sealer';
import { authRoutes } from './modules/auth/routes';
import { type AuthSettings, authenticator } from './modules/auth/service';
import { batchRoutes } from './modules/batches/routes';
import { BatchService } from './modules/batches/service';
import { CollectionsEngine } from './modules/collections/engine';
import { collectionsRoutes } from './modules/collections/routes';
import { CollectionsService } from './modules/collections/service';
import { commandRoutes } from './modules/commands/routes';
import { CommandService } from './modules/commands/service';
import { defaultAttestationRootsPath, loadAttestationRoots } from './modules/devices/attestation';
import type { IdentityPolicy, ProvisionBroker } from './modules/devices/registration';
import { deviceRoutes } from './modules/devices/routes';
import { deviceCredentials } from './modules/devices/service';
import { enrollmentRoutes } from './modules/enrollment/routes';
import { healthRoutes } from './modules/health/routes';
import { HealthService } from './modules/health/service';
import { keyRoutes } from './modules/keys/routes';
import { loanRoutes } from './modules/loans/routes';
import { LoanService } from './modules/loans/service';
import { MailOutbox } from './modules/mail/outbox';
import { mfaRoutes } from './modules/mfa/routes';
import { passwordRoutes } from './modules/password/routes';
import { reportRoutes } from './modules/reports/routes';
import { resolveSecretSetting } from './modules/settings/secrets';
import { startUploadSweeps } from './modules/uploads/retention';
import { userRoutes } from './modules/users/routes';
import { DEFAULT_WEBHOOK_TIMING, WebhookDelivery, type WebhookTiming } from './modules/webhooks/delivery';
import { webhookRoutes } from './modules/webhooks/routes';
import { WebhookService } from './modules/webhooks/service';
import { registerAuth } from './plugins/auth';
import { type DeviceChannel, startDeviceChannel } from './plugins/device-channel';
import { registerEnvelope } from './plugins/envelope';
import { frameworkErrors, registerErrorHandling } from './plugins/errors';
import { registerInputGuard } from './plugins/input-guard';
import { registerKeyRateLimit } from './plugins/key-rate-limit';
import { createMailer, type Mailer } from './plugins/mailer';
import { type Metrics, registerMetrics } from './plugins/metrics';
import { registerOpenApi } from './plugins/openapi';
import { registerSecurity } from './plugins/security';
import { registerWeb } from './plugins/web';

export interface AppContext {
  readonly config: Config;
  readonly database: Database;
  readonly db: Kysely<DB>;
  readonly codec: NodeEnvelopeCodec;
  readonly envelopeKey: string;
  readonly authSettings: AuthSettings;
  readonly mailer: Mailer;
  /** Outgoing mail, queued in the database and sent with retries by every instance (ADR 0008). */
  readonly mail: MailOutbox;
  /** Who a device is (docs/device-protocol.md §1): device keys, attestation, nonces. */
  readonly identity: IdentityPolicy;
  /** Provisions a device's broker client before its registration commits (external dynamic security). */
  provisionDevice: ProvisionBroker;
  readonly commands: CommandService;
  readonly batches: BatchService;
  /** Collections on autopilot: the API's side, and the daily run and payment watcher (modules/collections). */
  readonly collections: CollectionsService;
  readonly collectionsEngine: CollectionsEngine;
  /** This instance's Prometheus metrics (plugins/metrics.ts). */
  readonly metrics: Metrics;
  /** Webhook endpoints (modules/webhooks/service.ts). */
  readonly webhooks: WebhookService;
  /** Webhook events: written with what caused them, sent with retries by every instance. */
  readonly webhookDelivery: WebhookDelivery;
  /** Loans and payments (modules/loans/service.ts). */
  readonly loans: LoanService;
  /** What devices are told to connect to. */
  deviceMqttUrl: string;
  /** The database's health and figures (modules/health/service.ts). */
  readonly health: HealthService;
}

export interface BuildAppOptions {
  config: Config;
  database: Database;
  /** Outgoing mail; by default from SMTP_URL or the outbox in DATA_DIR. */
  mailer?: Mailer;
  /** Start the broker/gateway (default); the OpenAPI generator passes false. */
  deviceChannel?: boolean;
  /** Fastify logger options; tests pass false. */
  logger?: FastifyServerOptions['logger'];
}

/** Request ids: a random prefix per instance and a counter. */
function requestIds(): () => string {
  const prefix = randomBytes(4).toString('hex');
  let next = 0;
  return () => `${prefix}-${(next++).toString(36)}`;
}

export function loggerOptions(level: string): FastifyServerOptions['logger'] {
  return {
    level,
    redact: {
      paths: [
        'req.headers["x-api-key"]',
        'req.headers.authorization',
        'req.headers.cookie',
        'password',
        'newPassword',
        'token',
        '*.password',
        '*.newPassword',
        '*.token',
        '*.password_hash',
        '*.*.password',
        '*.*.token',
      ],
      censor: '[redacted]',
    },
  };
}

export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { config, database } = options;
  // Secrets generated once and kept in `settings` are sealed under SECRETS_KEY (or DATA_DIR/secrets.key),
  // loaded only when one is needed; a key that does not open them stops the start (SecretsKeyError).
  let secretsKey: SecretsKey | undefined;
  const secrets = () => {
    secretsKey ??= loadSecretsKey(config.secretsKey, config.dataDir);
    return secretsKey;
  };
  // TOTP secrets are sealed with it (modules/mfa/secret.ts); MFA_SECRET_KEY keeps it out of the database.
  const mfaSecretKey = await resolveSecretSetting(
    database.db,
    secrets,
    'mfa_secret_key',
    config.mfaSecretKey,
    () => randomBytes(32).toString('base64'),
  );
  // Webhook signing secrets are sealed with it (modules/webhooks/service.ts).
  const webhookSecretKey = await resolveSecretSetting(
    database.db,
    secrets,
    'webhook_secret_key',
    config.webhookSecretKey,
    () => randomBytes(32).toString('base64'),
  );
  const envelopeKey = await resolveSecretSetting(
    database.db,
    secrets,
    'envelope_key',
    config.envelopeKey,
    () => randomBytes(32).toString('base64'),
  );
  const roots =
    config.deviceAttestation === 'off'
      ? null
      : loadAttestationRoots(readFileSync(config.attestationRoots ?? defaultAttestationRootsPath(), 'utf8'));
  const ctx: AppContext = {
    config,
    database,
    db: database.db,
    codec: createNodeEnvelopeCodec(envelopeKey),
    envelopeKey,
    authSettings: {
      sessionTtlMs: config.sessionTtlMs,
      maxFailuresPerAccount: config.loginMaxFailuresPerAccount,
      maxFailuresPerAddress: config.loginMaxFailuresPerAddress,
      throttleWindowMs: config.loginThrottleWindowMs,
      mfa: {
        requiredLevels: config.mfaRequiredLevels,
        key: Buffer.from(mfaSecretKey, 'base64'),
        issuer: config.productLabel,
      },
    },
    mailer:
      options.mailer ??
      createMailer({
        smtpUrl: config.smtpUrl,
        from: config.mailFrom,
        outboxDir: join(config.dataDir, 'outbox'),
      }),
    identity: {
      deviceKey: config.deviceKey,
      attestation: config.deviceAttestation,
      roots,
      nonceTtlMs: config.registrationNonceTtlMs,
    },
    provisionDevice: null,
    mail: undefined as unknown as MailOutbox,
    commands: undefined as unknown as CommandService,
    batches: undefined as unknown as BatchService,
    collections: undefined as unknown as CollectionsService,
    collectionsEngine: undefined as unknown as CollectionsEngine,
    metrics: undefined as unknown as Metrics,
    webhooks: undefined as unknown as WebhookService,
    webhookDelivery: undefined as unknown as WebhookDelivery,
    loans: new LoanService({ db: database.db, defaultTimeZone: config.reportTimeZone }),
    deviceMqttUrl: '',
    health: new HealthService(database),
  };

  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    // A hop count is valid at run time (proxy-addr) though Fastify's types omit it.
    trustProxy: config.trustProxy as FastifyServerOptions['trustProxy'],
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    // A path Fastify cannot decode is answered in the house error shape, like every other failure.
    frameworkErrors,
    requestIdHeader: false,
    // Unique per instance (a random prefix) and per request (a counter): cheap, and enough to follow a
    // request through the logs.
    genReqId: requestIds(),
  });
  const webhookTiming: WebhookTiming = {
    ...DEFAULT_WEBHOOK_TIMING,
    retryFirstMs: config.webhookRetryFirstMs,
    timeoutMs: config.webhookTimeoutMs,
    offlineAfterMs: config.webhookOfflineAfterMs,
  };
  const webhooks = new WebhookService({
    db: database.db,
    secretKey: Buffer.from(webhookSecretKey, 'base64'),
    allowPrivate: config.webhookAllowPrivate,
    giveUpAfterMs: webhookTiming.giveUpAfterMs,
  });
  const webhookDelivery = new WebhookDelivery({
    db: database.db,
    log: app.log,
    openSecret: webhooks.openSecret,
    allowPrivate: config.webhookAllowPrivate,
    timing: webhookTiming,
  });
  Object.assign(ctx, { webhooks, webhookDelivery });
  const commands = new CommandService({
    db: database.db,
    log: app.log,
    oneShotTtlMs: config.commandTtlMs,
    resendAfterMs: config.commandResendAfterMs,
    events: webhookDelivery,
  });
  const batches = new BatchService({
    db: database.db,
    commands,
    log: app.log,
    oneShotTtlMs: config.commandTtlMs,
    workers: config.batchWorkers,
    events: webhookDelivery,
  });
  Object.assign(ctx, { commands, batches });
  const collections = new CollectionsService({
    db: database.db,
    commands,
    events: webhookDelivery,
    oneShotTtlMs: config.commandTtlMs,
    now: () => new Date(),
  });
  Object.assign(ctx, { collections });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);

  // Security headers first, so that every answer carries them (401s and 403s from the auth hook too).
  await registerSecurity(app);
  // Before the envelope and the auth hooks (authz/decisions.ts).
  registerAuthorizationCheck(app, config.authorizationCheck);
  await app.register(multipart, { limits: { fileSize: config.uploadMaxBytes, files: 1, fields: 20 } });
  registerEnvelope(app, ctx.codec);
  registerInputGuard(app);
  // Before the auth hook: a command call's every step (its sign-in check too) runs as priority work.
  registerPriorityRequests(app);
  registerAuth(app, authenticator(database.db), ROUTE_POLICIES, config.mfaRequiredLevels);
  await registerKeyRateLimit(app, config.keyRateLimitPerMinute);
  const consoleFallback = await registerWeb(app, {
    webDist: config.webDist,
    productLabel: config.productLabel,
    envelopeKey,
    allowedEmailDomains: config.allowedEmailDomains,
    passwordMinLength: config.passwordMinLength,
    clientCode: config.clientCode,
  });
  registerErrorHandling(app, consoleFallback);

  const metrics = registerMetrics(app, { health: ctx.health, token: config.metricsToken });
  // The collections engine counts failed actions in the metrics (so it is made after them).
  const collectionsEngine = new CollectionsEngine({
    db: database.db,
    commands,
    log: app.log,
    events: webhookDelivery,
    oneShotTtlMs: config.commandTtlMs,
    watchMs: config.collectionsWatchMs,
    runCheckMs: config.collectionsRunCheckMs,
    failed: metrics.collectionsActionFailed,
  });
  Object.assign(ctx, { collectionsEngine, metrics });
  const mail = new MailOutbox({
    db: database.db,
    mailer: ctx.mailer,
    log: app.log,
    failed: metrics.mailFailed,
  });
  Object.assign(ctx, { mail });
  app.addHook('onReady', async () => mail.start());
  app.addHook('preClose', async () => mail.stop());
  // The audit log's hash chain is sealed in the background, within a second (ADR 0009).
  const auditSealer = new AuditSealer({ db: database.db, log: app.log });
  app.addHook('onReady', async () => auditSealer.start());
  app.addHook('preClose', async () => auditSealer.stop());
  app.addHook('onReady', async () => webhookDelivery.start());
  app.addHook('preClose', async () => webhookDelivery.stop());
  await registerOpenApi(app, { ui: config.apiDocs });
  await app.register(healthRoutes(ctx));
  await app.register(authRoutes(ctx));
  await app.register(userRoutes(ctx));
  await app.register(keyRoutes(ctx));
  await app.register(mfaRoutes(ctx));
  await app.register(passwordRoutes(ctx));
  await app.register(deviceRoutes(ctx));
  await app.register(enrollmentRoutes(ctx));
  await app.register(commandRoutes(ctx));
  await app.register(batchRoutes(ctx));
  await app.register(reportRoutes(ctx));
  await app.register(auditRoutes(ctx));
  await app.register(webhookRoutes(ctx));
  await app.register(collectionsRoutes(ctx));
  await app.register(loanRoutes(ctx));
  app.addHook('onClose', async () => ctx.mailer.close());

  if (options.deviceChannel !== false) {
    const channel = await startDeviceChannel(
      config,
      deviceCredentials(database.db),
      commands,
      app.log,
      metrics.ackApplied,
    );
    metrics.watchBroker(channel.broker ? 'embedded' : 'external', () => channel.gateway.connected);
    ctx.deviceMqttUrl = channel.deviceMqttUrl;
    ctx.provisionDevice = channel.provisionDevice;
    app.decorate('deviceChannel', channel);
    app.addHook('onClose', async () => channel.close());
    // Batch workers run beside the device channel; on close they stop before it does.
    app.addHook('onReady', async () => batches.start());
    app.addHook('preClose', async () => batches.stop());
    // The collections daily run and payment watcher, beside the batch workers (COLLECTIONS_WORKERS).
    if (config.collectionsWorkers) {
      app.addHook('onReady', async () => collectionsEngine.start());
      app.addHook('preClose', async () => collectionsEngine.stop());
    }
    // Uploaded files past UPLOAD_RETENTION are deleted by a sweep on every instance (its own DATA_DIR).
    let uploadSweeps: { stop(): Promise<void> } | null = null;
    app.addHook('onReady', async () => {
      uploadSweeps = startUploadSweeps({
        db: database.db,
        dataDir: config.dataDir,
        retentionMs: config.uploadRetentionMs,
        log: app.log,
      });
    });
    app.addHook('preClose', async () => uploadSweeps?.stop());
  }
  app.decorate('ctx', ctx);
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The app's context (services, config): for tests and the demo. */
    ctx: AppContext;
    deviceChannel?: DeviceChannel;
  }
}
