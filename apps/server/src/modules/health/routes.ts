import type { FastifyPluginAsync } from 'fastify';
import type { AppContext } from '../../app';

/** Liveness (`/healthz`: the process answers) and readiness (`/readyz`: the database answers). */
export function healthRoutes(ctx: AppContext): FastifyPluginAsync {
  return async (app) => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async (request, reply) => {
      try {
        await ctx.database.ping();
        const channel = app.deviceChannel;
        return {
          status: 'ok',
          database: ctx.database.kind,
          // How devices reach the server, and whether the broker checks who they are.
          ...(channel
            ? {
                broker: {
                  kind: channel.broker ? 'embedded' : 'external',
                  connected: channel.gateway.connected,
                  deviceAuth: channel.deviceAuth,
                },
              }
            : {}),
        };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed: database unreachable');
        return reply
          .status(503)
          .send({ status: 'error', code: 'UNAVAILABLE', message: 'Database unreachable' });
      }
    });
  };
}
