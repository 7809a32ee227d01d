/** `npm start`: serve Lendlock from the environment's configuration until SIGTERM or SIGINT. */
import { ConfigError, loadConfig } from './config';
import { startServer } from './server';

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  // Prints the banner: the accounts it created, the demo fleet and the `Console:` line.
  const server = await startServer(config);

  const shutdown = (signal: string) => {
    server.app.log.info({ signal }, 'shutting down');
    const timer = setTimeout(() => {
      server.app.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, config.shutdownTimeoutMs);
    timer.unref();
    server.close().then(
      () => process.exit(0),
      (error) => {
        server.app.log.error({ err: error }, 'error during shutdown');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error) => {
  console.error(`Lendlock failed to start: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
