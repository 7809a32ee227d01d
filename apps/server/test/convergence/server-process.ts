/**
 * The server of the convergence harness (harness.ts), in a process of its own so that it can be killed
 * with SIGKILL: `startServer` as `npm start` runs it, from the environment (CONVERGENCE_ENV, JSON), with the
 * collections workers off and one CollectionsEngine on an injected clock instead, driven by the harness
 * over the IPC channel:
 *
 *   { id, op: 'clock', at }         the engine's clock
 *   { id, op: 'run' }               the day's run (waiting out another instance's lease), its state
 *   { id, op: 'watch' }             one poll of the payment watcher, how many actions it took
 *   { id, op: 'sql', text, params } rows of a query (the harness reads and checks the database through it:
 *                                   PGlite is one process's)
 *
 * Each answer is `{ id, result }` or `{ id, error }`. SIGTERM closes the server gracefully.
 */
import { CompiledQuery } from 'kysely';
import { loadConfig } from '../../src/config';
import { CollectionsEngine } from '../../src/modules/collections/engine';
import { startServer } from '../../src/server';

type Request =
  | { id: number; op: 'clock'; at: string }
  | { id: number; op: 'run' }
  | { id: number; op: 'watch' }
  | { id: number; op: 'sql'; text: string; params?: unknown[] };

async function main(): Promise<void> {
  const env = JSON.parse(process.env.CONVERGENCE_ENV ?? '{}') as Record<string, string>;
  const config = loadConfig({ ...env, COLLECTIONS_WORKERS: 'off' });
  const server = await startServer(config, () => {});
  let clock = new Date();
  const engine = new CollectionsEngine({
    db: server.app.ctx.db,
    commands: server.app.ctx.commands,
    log: server.app.log,
    events: server.app.ctx.webhookDelivery,
    oneShotTtlMs: config.commandTtlMs,
    now: () => clock,
    chunkSize: 2,
    // A killed instance's lease lapses soon: the next one takes the run over.
    leaseMs: 1_000,
    instanceId: `convergence-${process.pid}`,
  });
  const handle = async (request: Request): Promise<unknown> => {
    switch (request.op) {
      case 'clock':
        clock = new Date(request.at);
        return null;
      case 'run': {
        const deadline = Date.now() + 20_000;
        for (;;) {
          const outcome = await engine.runDaily();
          if (outcome.state !== 'BUSY' || Date.now() > deadline) return outcome.state;
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      }
      case 'watch':
        return engine.watchPayments();
      case 'sql':
        return (await server.app.ctx.db.executeQuery(CompiledQuery.raw(request.text, request.params ?? [])))
          .rows;
    }
  };
  process.on('message', (message: Request) => {
    handle(message).then(
      (result) => process.send?.({ id: message.id, result }),
      (error: unknown) =>
        process.send?.({ id: message.id, error: error instanceof Error ? error.message : String(error) }),
    );
  });
  process.once('SIGTERM', () => {
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
  // The harness gone (interrupted): no server left behind.
  process.once('disconnect', () => process.exit(1));
  process.send?.({ ready: server.url });
}

main().catch((error) => {
  console.error(
    `convergence server failed to start: ${error instanceof Error ? error.stack : String(error)}`,
  );
  process.exit(1);
});
