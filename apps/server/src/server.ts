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
  // The banner: the accounts created, the demo fleet and the console's address, printed in one block
  // once the server listens and the demo runs, so that no log line comes between them.
  const banner: string[] = [];
  try {
    // As the owner role when DATABASE_OWNER_URL is set (docs/operations.md § Database roles).
    await prepareSchema(config, database);
    // The server refuses to start when row-level security would not bind it (docs/adr/0011).
    await assertRowSecurity(database.db);
    const result = await bootstrap(config, database);
    for (const account of result.created)
      banner.push(credentialsLine(account.level, account.email, account.password));
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
      banner.push(
        `Demo fleet: ${config.demoDevices} simulated devices (npm run sim adds more: --secret ${demo.enrollmentSecret})`,
      );
    banner.push(`Console: ${consoleUrl(config, url)}`);
    print(banner.join('\n'));
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
    // Accounts created before the failure are printed all the same: their passwords are shown only once.
    if (banner.length > 0) print(banner.join('\n'));
    await database.close().catch(() => {});
    throw error;
  }
}

/** The address printed on the `Console:` line: localhost for a server on this machine's addresses. */
function consoleUrl(config: Config, url: string): string {
  const local = ['0.0.0.0', '::', '127.0.0.1', 'localhost'].includes(config.host);
  return local ? `http://localhost:${new URL(url).port}` : url;
}
