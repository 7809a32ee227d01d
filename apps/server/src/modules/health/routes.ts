import type { FastifyPluginAsync } from 'fastify';
import type { RouteContext } from '../../core/context';

const UNREACHABLE_MESSAGES = {
  database: 'Database unreachable',
  broker: 'MQTT broker unreachable',
  both: 'Database and MQTT broker unreachable',
} as const;

/**
 * Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers a `SELECT 1`
 * and this instance's gateway is connected to the MQTT broker). Not ready is 503 naming what is down.
 */
export function healthRoutes(ctx: RouteContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async (request, reply) => {
      const databaseUp = await ctx.health.databaseAnswers((error) =>
        request.log.warn({ err: error }, 'readiness check failed: database unreachable'),
      );
      const channel = app.deviceChannel;
      // How devices reach the server, and whether the broker checks who they are.
      const broker = channel
        ? {
            kind: channel.broker ? ('embedded' as const) : ('external' as const),
            connected: channel.gateway.connected,
            deviceAuth: channel.deviceAuth,
          }
        : null;
      if (broker && !broker.connected) request.log.warn('readiness check failed: MQTT broker unreachable');
      const details = { database: ctx.health.databaseKind, ...(broker ? { broker } : {}) };
      if (databaseUp && (!broker || broker.connected)) return { status: 'ok', ...details };
      const down = !databaseUp && broker && !broker.connected ? 'both' : databaseUp ? 'broker' : 'database';
      return reply.status(503).send({
        status: 'error',
        code: 'UNAVAILABLE',
        message: UNREACHABLE_MESSAGES[down],
        unreachable: down === 'both' ? ['database', 'broker'] : [down],
        ...details,
      });
    });
  };
}
