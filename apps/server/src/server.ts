/**
 * Starting and stopping a whole server: database, migrations, bootstrap, app, listen, graceful shutdown.
 */
import type { FastifyInstance } from 'fastify';
import { buildApp } from './app';
import { bootstrap, credentialsLine, wantsDemo } from './bootstrap';
import type { Config } from './config';
import { type Database, openDatabase } from './db/database';
import { assertRowSecurity, ownsAuditLog, prepareSchema } from './db/roles';
import { startDemo } from './demo';

export interface RunningServer {
  app: FastifyInstance;
  database: Database;
  url: string;
  close(): Promise<void>;
}

export async function startServer(
  config: Config,
  print: (line: string) => void = console.log,
): Promise<RunningServer> {
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.databasePoolSize,
    preparedStatements: config.databasePreparedStatements,
  });
  try {
    // As the owner role when DATABASE_OWNER_URL is set (docs/operations.md § Database roles).
    await prepareSchema(config, database);
    // The server refuses to start when row-level security would not bind it (docs/adr/0011).
    await assertRowSecurity(database.db);
    const result = await bootstrap(config, database);
    for (const account of result.created)
      print(credentialsLine(account.level, account.email, account.password));
    const app = await buildApp({ config, database });
    const url = await app.listen({ port: config.port, host: config.host });
    app.log.info({ url, database: database.kind }, 'Lendlock is serving');
    if (database.kind === 'postgres' && (await ownsAuditLog(database.db)))
      app.log.warn(
        'the application role owns audit_log and could disable its append-only triggers: run migrations as an owner role (DATABASE_OWNER_URL, docs/operations.md § Database roles)',
      );
    const demo = wantsDemo(config, database)
      ? await startDemo(app, {
          url: url.replace('0.0.0.0', '127.0.0.1'),
          dataDir: config.dataDir,
          devices: config.demoDevices,
          seedHistory: result.demo,
        })
      : null;
    if (demo)
      print(
        `Demo fleet: ${config.demoDevices} simulated devices (npm run sim adds more: --secret ${demo.enrollmentSecret})`,
      );
    let closing: Promise<void> | undefined;
    return {
      app,
      database,
      url,
      close: () => {
        closing ??= (async () => {
          await demo?.stop();
          await app.close();
          await database.close();
        })();
        return closing;
      },
    };
  } catch (error) {
    await database.close().catch(() => {});
    throw error;
  }
}
