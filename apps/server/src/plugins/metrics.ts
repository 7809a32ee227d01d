/**
 * Prometheus metrics at GET /metrics (the figures to watch in production, under names and
 * types `promtool check metrics` accepts). Per instance: HTTP request latencies per route, device
 * acknowledgements by status and their latency from issue (histograms), mail given up, failed attempts of
 * automated collections actions, second factors locked. Read from the
 * database at scrape time through partial indexes (the same value on every instance): pending commands,
 * incomplete batches and the rows they have left, devices online, mail waiting in the outbox (ADR 0008: a
 * mail that cannot be sent is never silent), webhook endpoints whose circuit breaker is open. Node's default process metrics under their standard names.
 * Each app has its own registry (no module-level state). docs/operations.md#metrics lists them all.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { COLLECTIONS_RETRY } from '@lendlock/contract';
import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { AppError } from '../core/errors';
import type { HealthService } from '../modules/health/service';

/** prom-client's three gauges named like counters (`*_total`); `nodejs_active_*{type}` say the same by type. */
const MISNAMED_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

const ACK_STATUSES = ['DELIVERED', 'EXECUTED', 'FAILED'] as const;

/** Final acknowledgements waiting for their latency to be read (one query per scrape or per this many). */
const LATENCY_BATCH = 5000;

export interface Metrics {
  registry: Registry;
  /** An acknowledgement this instance applied: counted, and (EXECUTED, FAILED) its latency observed. */
  ackApplied(imei: string, ack: { id: string; status: string }): void;
  /** Mail given up by this instance's outbox worker, by kind. */
  mailFailed: Counter<'kind'>;
  /** Failed attempts of automated collections actions seen by this instance's retry pass, by action. */
  collectionsActionFailed: Counter<'action'>;
  /** Accounts whose second factor this instance locked after too many wrong codes (modules/mfa). */
  mfaLocked: Counter;
  /** The device channel's broker, whose connection `lendlock_broker_connected` reports. */
  watchBroker(kind: 'embedded' | 'external', connected: () => boolean): void;
  /** The audit chain's head this instance anchored (modules/audit/anchor.ts). */
  auditAnchored(anchor: { seq: number }): void;
  /** An HTTP request this instance answered (the plugin's onResponse hook). */
  observeRequest(labels: { method: string; route: string; status: string }, seconds: number): void;
}

export interface MetricsOptions {
  /** The database's figures (modules/health/service.ts). */
  health: HealthService;
  log: FastifyBaseLogger;
}

/** Whether `header` is `Bearer <token>`, compared in constant time (digests, so lengths do not show). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '')?.[1];
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  const same = timingSafeEqual(digest(given ?? ''), digest(token));
  return given !== undefined && same;
}

/** This instance's registry and its metrics (built by container.ts; served by `registerMetrics`). */
export function createMetrics({ health, log }: MetricsOptions): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  for (const name of MISNAMED_DEFAULTS) registry.removeSingleMetric(name);

  /** A gauge read from the database; when the database does not answer, it has no sample this scrape. */
  const fromDatabase = <L extends string>(read: (gauge: Gauge<L>) => Promise<void>) =>
    async function (this: Gauge<L>) {
      try {
        await read(this);
      } catch (error) {
        log.warn({ err: error }, 'metrics: database read failed');
        this.reset();
        this.remove({});
      }
    };

  let broker: { kind: 'embedded' | 'external'; connected: () => boolean } | null = null;
  new Gauge({
    name: 'lendlock_instance_info',
    help: 'Always 1: a Lendlock instance, with its database kind and broker (join other series on it)',
    labelNames: ['database', 'broker'],
    registers: [registry],
    collect() {
      this.reset();
      this.set({ database: health.databaseKind, broker: broker?.kind ?? 'none' }, 1);
    },
  });
  new Gauge({
    name: 'lendlock_broker_connected',
    help: "1 while this instance's gateway is connected to the MQTT broker, else 0",
    registers: [registry],
    collect() {
      if (broker) this.set(broker.connected() ? 1 : 0);
      else this.remove({});
    },
  });
  new Gauge({
    name: 'lendlock_database_up',
    help: '1 when the database answered this scrape (SELECT 1), else 0',
    registers: [registry],
    async collect() {
      this.set((await health.databaseAnswers()) ? 1 : 0);
    },
  });

  const requests = new Histogram({
    name: 'lendlock_http_request_duration_seconds',
    help: 'HTTP requests handled by this instance, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const acks = new Counter({
    name: 'lendlock_device_acks_total',
    help: "Devices' own acknowledgements applied by this instance, by status (DELIVERED, EXECUTED, FAILED)",
    labelNames: ['status'],
    registers: [registry],
  });
  // Present at 0 from the start, so that rate() and increase() see the first acknowledgement.
  for (const status of ACK_STATUSES) acks.inc({ status }, 0);

  let awaitingLatency = new Map<string, { imei1: string; transactionId: string }>();
  /** One query for the latencies of the final acknowledgements since the last call (lost if it fails). */
  const observeLatencies = async () => {
    const batch = [...awaitingLatency.values()];
    awaitingLatency = new Map();
    for (const seconds of await health.ackLatencies(batch)) ackLatency.observe(seconds);
  };
  const ackLatency = new Histogram({
    name: 'lendlock_command_ack_latency_seconds',
    help: "Issue to the device's EXECUTED or FAILED, for acknowledgements applied by this instance (time offline included)",
    buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 21600, 86400],
    registers: [registry],
    async collect() {
      await observeLatencies().catch((error: unknown) =>
        log.warn({ err: error }, 'metrics: reading acknowledgement latencies failed'),
      );
    },
  });

  new Gauge({
    name: 'lendlock_commands_pending',
    help: 'Commands not yet acknowledged by their device, by status (QUEUED, SENT, DELIVERED)',
    labelNames: ['status'],
    registers: [registry],
    collect: fromDatabase(async (gauge) => {
      for (const [status, count] of await health.pendingCommands()) gauge.set({ status }, count);
    }),
  });
  new Gauge({
    name: 'lendlock_batches_incomplete',
    help: 'Batches neither complete nor cancelled (running, paused or interrupted)',
    registers: [registry],
    collect: fromDatabase(async (gauge) => gauge.set(await health.incompleteBatches())),
  });
  new Gauge({
    name: 'lendlock_batch_rows_remaining',
    help: 'Rows of incomplete batches not processed yet',
    registers: [registry],
    collect: fromDatabase(async (gauge) => gauge.set(await health.remainingBatchRows())),
  });
  new Gauge({
    name: 'lendlock_devices_online',
    help: 'Devices connected to the broker',
    registers: [registry],
    collect: fromDatabase(async (gauge) => gauge.set(await health.onlineDevices())),
  });
  new Gauge({
    name: 'lendlock_mail_outbox_pending',
    help: 'Mail in the outbox not sent yet nor given up (waiting, being sent, or waiting for a retry)',
    registers: [registry],
    collect: fromDatabase(async (gauge) => gauge.set(await health.pendingMail())),
  });
  new Gauge({
    name: 'lendlock_webhook_circuits_open',
    help: 'Webhook endpoints whose circuit breaker is open or half-open (failing receivers, paused)',
    registers: [registry],
    collect: fromDatabase(async (gauge) => gauge.set(await health.openCircuits())),
  });
  const mailFailed = new Counter({
    name: 'lendlock_mail_failed_total',
    help: 'Mail given up by this instance: refused for good, or not sent before its deadline',
    labelNames: ['kind'],
    registers: [registry],
  });
  // Present at 0 from the start, so that an alert on its increase sees the first failure.
  mailFailed.inc({ kind: 'password_reset' }, 0);
  const collectionsActionFailed = new Counter({
    name: 'lendlock_collections_failed_total',
    help: 'Automated collections actions (LOCK, UNLOCK, RELEASE) whose command failed on the device, each attempt',
    labelNames: ['action'],
    registers: [registry],
  });
  for (const action of COLLECTIONS_RETRY.actions) collectionsActionFailed.inc({ action }, 0);
  const mfaLocked = new Counter({
    name: 'lendlock_mfa_locks_total',
    help: 'Second factors locked by this instance after MFA_LOCK_AFTER wrong codes (an administrator must reset them)',
    registers: [registry],
  });
  // Present at 0 from the start, so that an alert on its increase sees the first lock.
  mfaLocked.inc(0);
  const anchorSeq = new Gauge({
    name: 'lendlock_audit_anchor_seq',
    help: "The audit chain's link this instance last anchored (its head then); absent before the first anchor",
    registers: [registry],
  });
  const anchorTime = new Gauge({
    name: 'lendlock_audit_anchor_timestamp_seconds',
    help: 'When this instance last anchored the audit chain, as Unix time',
    registers: [registry],
  });

  return {
    registry,
    ackApplied(imei, ack) {
      acks.inc({ status: ack.status });
      if (ack.status !== 'EXECUTED' && ack.status !== 'FAILED') return;
      awaitingLatency.set(`${imei}|${ack.id}`, { imei1: imei, transactionId: ack.id });
      if (awaitingLatency.size >= LATENCY_BATCH) {
        observeLatencies().catch((error: unknown) =>
          log.warn({ err: error }, 'metrics: reading acknowledgement latencies failed'),
        );
      }
    },
    mailFailed,
    collectionsActionFailed,
    mfaLocked,
    auditAnchored(anchor) {
      anchorSeq.set(anchor.seq);
      anchorTime.setToCurrentTime();
    },
    watchBroker(kind, connected) {
      broker = { kind, connected };
    },
    observeRequest(labels, seconds) {
      requests.observe(labels, seconds);
    },
  };
}

/** Times every request and serves `GET /metrics` (with `token`: only to `Authorization: Bearer <token>`). */
export function registerMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  const { registry } = metrics;
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    if (route === '/metrics') return;
    metrics.observeRequest(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', async (request, reply) => {
    if (token && !bearerMatches(request.headers.authorization, token)) {
      reply.header('www-authenticate', 'Bearer realm="metrics"');
      throw new AppError(401, 'UNAUTHENTICATED', 'Metrics need the bearer token of METRICS_TOKEN.');
    }
    return reply.header('content-type', registry.contentType).send(await registry.metrics());
  });
}
