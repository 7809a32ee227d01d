/**
 * The app factory: builds a Fastify instance from a configuration and an open database. No module-level
 * state, so tests build as many apps as they like.
 */
import { randomBytes } from 'node:crypto';
import multipart from '@fastify/multipart';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { registerAuthorizationCheck } from './authz/decisions';
import { ROUTE_POLICIES } from './authz/policies';
import type { Config } from './config';
import { buildContainer } from './container';
import type { AppContext } from './core/context';
import type { Database } from './db/database';
import { registerPriorityRequests } from './db/priority';
import { RequestLogs } from './lib/request-logs';
import { auditRoutes } from './modules/audit/routes';
import { authRoutes } from './modules/auth/routes';
import { batchRoutes } from './modules/batches/routes';
import { type DeviceChannel, startDeviceChannel } from './modules/channel/device-channel';
import { collectionsRoutes } from './modules/collections/routes';
import { commandRoutes } from './modules/commands/routes';
import { deviceRoutes } from './modules/devices/routes';
import { enrollmentRoutes } from './modules/enrollment/routes';
import { healthRoutes } from './modules/health/routes';
import { keyRoutes } from './modules/keys/routes';
import { loanRoutes } from './modules/loans/routes';
import type { Mailer } from './modules/mail/mailer';
import { mfaRoutes } from './modules/mfa/routes';
import { passwordRoutes } from './modules/password/routes';
import { reportRoutes } from './modules/reports/routes';
import { startUploadSweeps } from './modules/uploads/retention';
import { userRoutes } from './modules/users/routes';
import { webhookRoutes } from './modules/webhooks/routes';
import { registerAuth } from './plugins/auth';
import { registerEnvelope } from './plugins/envelope';
import { frameworkErrors, registerErrorHandling } from './plugins/errors';
import { registerInputGuard } from './plugins/input-guard';
import { registerKeyRateLimit } from './plugins/key-rate-limit';
import { registerMetrics } from './plugins/metrics';
import { registerOpenApi } from './plugins/openapi';
import { registerSecurity } from './plugins/security';
import { registerWeb } from './plugins/web';

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
  const app = Fastify({
    logger: options.logger ?? loggerOptions(config.logLevel),
    // The device API's successful calls at debug, so that a fleet's registrations bury nothing.
    logController: new RequestLogs(),
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
  // Every service, in dependency order (container.ts).
  const ctx: AppContext = await buildContainer({
    config,
    database,
    log: app.log,
    ...(options.mailer ? { mailer: options.mailer } : {}),
  });
  const { commands, collectionsEngine, metrics, mail, auditSealer, webhookDelivery } = ctx;
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
  registerAuth(app, ctx.authenticator, ROUTE_POLICIES, config.mfaRequiredLevels);
  await registerKeyRateLimit(app, config.keyRateLimitPerMinute);
  const consoleFallback = await registerWeb(app, {
    webDist: config.webDist,
    productLabel: config.productLabel,
    envelopeKey: ctx.envelopeKey,
    allowedEmailDomains: config.allowedEmailDomains,
    passwordMinLength: config.passwordMinLength,
    clientCode: config.clientCode,
    sessionIdleTimeoutMs: config.sessionIdleTimeoutMs,
    reportTimeZone: config.reportTimeZone,
  });
  registerErrorHandling(app, consoleFallback);

  registerMetrics(app, metrics, config.metricsToken);
  app.addHook('onReady', async () => mail.start());
  app.addHook('preClose', async () => mail.stop());
  // The audit log's hash chain is sealed in the background, within a second (ADR 0009).
  app.addHook('onReady', async () => auditSealer.start());
  app.addHook('preClose', async () => auditSealer.stop());
  app.addHook('onReady', async () => webhookDelivery.start());
  app.addHook('preClose', async () => webhookDelivery.stop());
  app.addHook('onReady', async () => ctx.offlineAnnouncer.start());
  app.addHook('preClose', async () => ctx.offlineAnnouncer.stop());
  await registerOpenApi(app, { ui: config.apiDocs });
  for (const routes of [
    healthRoutes,
    authRoutes,
    userRoutes,
    keyRoutes,
    mfaRoutes,
    passwordRoutes,
    deviceRoutes,
    enrollmentRoutes,
    commandRoutes,
    batchRoutes,
    reportRoutes,
    auditRoutes,
    webhookRoutes,
    collectionsRoutes,
    loanRoutes,
  ]) {
    await app.register(routes(ctx));
  }
  app.addHook('onClose', async () => ctx.mailer.close());

  if (options.deviceChannel !== false) {
    // The channel hands devices' messages to the command service and asks the device service who may
    // connect; what devices are told to connect to is set on ctx.channel.
    const channel = await startDeviceChannel({
      config,
      log: app.log,
      credentials: ctx.devices,
      handlers: commands,
      endpoint: ctx.channel,
      ackApplied: metrics.ackApplied,
    });
    metrics.watchBroker(channel.broker ? 'embedded' : 'external', () => channel.gateway.connected);
    app.decorate('deviceChannel', channel);
    app.addHook('onClose', async () => channel.close());
    // Batch workers run beside the device channel; on close they stop before it does.
    app.addHook('onReady', async () => ctx.batchWorker.start());
    app.addHook('preClose', async () => ctx.batchWorker.stop());
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
