/**
 * Operator CLI: `npm run cli -- user create --email … --phone … --level … --password … [--permissions a,b]`
 * and `npm run cli -- migrate`. With the embedded database, stop the server first (one process at a time).
 */
import { parseArgs } from 'node:util';
import { USER_LEVELS, type UserLevel } from '@lendlock/contract';
import { credentialsLine } from './bootstrap';
import { ConfigError, loadConfig } from './config';
import { migrate, openDatabase } from './db/database';
import { generatePassword } from './lib/secrets';
import { createUser } from './modules/users/service';
import { AppError } from './plugins/errors';

const USAGE = `Usage:
  npm run cli -- migrate
  npm run cli -- user create --email <email> --phone <10 digits> --level <USER|ADMIN|SUPERADMIN>
                             [--password <password>] [--permissions <name,name,…>] [--retailer-phone <10 digits>]
Without --password a password is generated and printed once.`;

export async function runCli(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const [command, sub, ...rest] = argv;
  const config = loadConfig();
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
  });
  try {
    await migrate(database.db);
    if (command === 'migrate') {
      out('Migrations applied.');
      return 0;
    }
    if (command === 'user' && sub === 'create') {
      const { values } = parseArgs({
        args: rest,
        options: {
          email: { type: 'string' },
          phone: { type: 'string' },
          level: { type: 'string', default: 'USER' },
          password: { type: 'string' },
          permissions: { type: 'string', default: '' },
          'retailer-phone': { type: 'string' },
        },
        strict: true,
      });
      const level = (values.level ?? 'USER').toUpperCase();
      if (!values.email || !(USER_LEVELS as readonly string[]).includes(level)) {
        console.error(`--email is required and --level must be one of ${USER_LEVELS.join(', ')}.\n${USAGE}`);
        return 2;
      }
      const password = values.password ?? generatePassword();
      await createUser(
        database.db,
        {
          email: values.email,
          phone: values.phone ?? null,
          password,
          userlevel: level as UserLevel,
          permissions: values.permissions
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean),
          retailerPhone: values['retailer-phone'] ?? null,
        },
        { allowedEmailDomains: config.allowedEmailDomains, passwordMinLength: config.passwordMinLength },
      );
      out(
        values.password
          ? `Created ${level} ${values.email}.`
          : credentialsLine(level as UserLevel, values.email, password),
      );
      return 0;
    }
    console.error(USAGE);
    return 2;
  } finally {
    await database.close();
  }
}

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof ConfigError || error instanceof AppError) console.error(error.message);
    else console.error(`Failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof AppError ? 2 : 1);
  },
);
