/**
 * Prometheus metrics at GET /metrics (issue 8: the figures to watch in production): HTTP request counts
 * and latencies per route, device acknowledgements by status, and, read from the database at scrape
 * time through partial indexes, pending commands, running batches and the rows they have left, devices
 * online, and the latency from issue to the device's acknowledgement over the last five minutes; mail
 * waiting in the outbox and mail given up (ADR 0008: a mail that cannot be sent is never silent).
 * Each app has its own registry (no module-level state).
 */
import type { FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { DB } from '../db/types';
import { countPendingMail } from '../modules/mail/repository';
import { AppError } from './errors';

export interface Metrics {
  registry: Registry;
  acks: Counter<'status'>;
  /** Mail given up by this instance's outbox worker, by kind. */
  mailFailed: Counter<'kind'>;
}

export function registerMetrics(app: FastifyInstance, db: Kysely<DB>, token: string | undefined): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'lendlock_process_' });
  const requests = new Histogram({
    name: 'lendlock_http_request_duration_seconds',
    help: 'HTTP requests by route and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const acks = new Counter({
    name: 'lendlock_device_acks_total',
    help: "Devices' own acknowledgements by status (DELIVERED, EXECUTED, FAILED)",
    labelNames: ['status'],
    registers: [registry],
  });
  new Gauge({
    name: 'lendlock_commands_pending',
    help: 'Commands not yet acknowledged by their device, by status',
    labelNames: ['status'],
    registers: [registry],
    async collect() {
      const rows = await sql<{ status: string; n: number }>`
        SELECT status, count(*)::int AS n FROM commands WHERE status IN ('QUEUED', 'SENT', 'DELIVERED') GROUP BY status`.execute(
        db,
      );
      this.reset();
      for (const status of ['QUEUED', 'SENT', 'DELIVERED'])
        this.set({ status }, Number(rows.rows.find((r) => r.status === status)?.n ?? 0));
    },
  });
  new Gauge({
    name: 'lendlock_batches_incomplete',
    help: 'Batches not complete, and the rows they have left',
    labelNames: ['what'],
    registers: [registry],
    async collect() {
      const row = await sql<{ batches: number; rows: number }>`
        SELECT (SELECT count(*)::int FROM batches WHERE status = 'incomplete') AS batches,
               (SELECT coalesce(sum(cardinality(c.seqs)), 0)::int FROM batch_chunks c
                JOIN batches b ON b.id = c.batch_id WHERE b.status = 'incomplete') AS rows`.execute(db);
      this.set({ what: 'batches' }, Number(row.rows[0]?.batches ?? 0));
      this.set({ what: 'rows' }, Number(row.rows[0]?.rows ?? 0));
    },
  });
  const mailFailed = new Counter({
    name: 'lendlock_mail_failed_total',
    help: 'Mail given up by this instance: refused for good, or not sent before its deadline',
    labelNames: ['kind'],
    registers: [registry],
  });
  // Present at 0 from the start, so that an alert on its increase sees the first failure.
  mailFailed.inc({ kind: 'password_reset' }, 0);
  new Gauge({
    name: 'lendlock_mail_outbox_pending',
    help: 'Mail in the outbox not sent yet nor given up (waiting, being sent, or waiting for a retry)',
    registers: [registry],
    async collect() {
      this.set(await countPendingMail(db));
    },
  });
  new Gauge({
    name: 'lendlock_devices_online',
    help: 'Devices connected to the broker',
    registers: [registry],
    async collect() {
      const row = await sql<{ n: number }>`SELECT count(*)::int AS n FROM devices WHERE online`.execute(db);
      this.set(Number(row.rows[0]?.n ?? 0));
    },
  });
  new Gauge({
    name: 'lendlock_command_ack_latency_seconds',
    help: 'Issue to device acknowledgement (EXECUTED or FAILED), commands of the last 5 minutes',
    labelNames: ['quantile'],
    registers: [registry],
    async collect() {
      const row = await sql<{ p50: number | null; p99: number | null }>`
        SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - created_at)) AS p50,
               percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM completed_at - created_at)) AS p99
        FROM commands WHERE created_at > now() - interval '5 minutes' AND status IN ('EXECUTED', 'FAILED')`.execute(
        db,
      );
      this.set({ quantile: '0.5' }, Number(row.rows[0]?.p50 ?? 0));
      this.set({ quantile: '0.99' }, Number(row.rows[0]?.p99 ?? 0));
    },
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unknown';
    if (route === '/metrics') return;
    requests.observe(
      { method: request.method, route, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.get('/metrics', async (request, reply) => {
    if (token && request.headers.authorization !== `Bearer ${token}`) {
      throw new AppError(401, 'UNAUTHENTICATED', 'Metrics need the bearer token of METRICS_TOKEN.');
    }
    return reply.header('content-type', registry.contentType).send(await registry.metrics());
  });
  return { registry, acks, mailFailed };
}
