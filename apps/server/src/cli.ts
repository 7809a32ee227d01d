/**
 * Operator CLI: `npm run cli -- user create --email … --phone … --level … --password … [--permissions a,b]`,
 * `npm run cli -- enrollment-secret add|list|revoke …`, `npm run cli -- mfa reset --email …` and
 * `npm run cli -- migrate`. With the embedded
 * database, stop the server first (one process at a time).
 */
import { parseArgs } from 'node:util';
import {
  ENROLLMENT_MESSAGES,
  enrollmentSecretNameSchema,
  USER_LEVELS,
  type UserLevel,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { credentialsLine } from './bootstrap';
import { ConfigError, loadConfig } from './config';
import { migrate, openDatabase } from './db/database';
import type { DB } from './db/types';
import { generatePassword } from './lib/secrets';
import { appendAudit } from './modules/audit/repository';
import { addEnrollmentSecret, enrollmentSecrets, revokeEnrollmentSecret } from './modules/enrollment/service';
import { resetMfa } from './modules/mfa/service';
import { createUser } from './modules/users/service';
import { AppError } from './plugins/errors';

const USAGE = `Usage:
  npm run cli -- migrate
  npm run cli -- user create --email <email> --phone <10 digits> --level <USER|ADMIN|SUPERADMIN>
                             [--password <password>] [--permissions <name,name,…>] [--retailer-phone <10 digits>]
  npm run cli -- enrollment-secret add --name <name> [--expires <ISO date-time>]
  npm run cli -- enrollment-secret list
  npm run cli -- enrollment-secret revoke --name <name>
  npm run cli -- mfa reset --email <email>
Without --password a password is generated and printed once. An enrollment secret is printed once, when
it is added; only its hash is kept.`;

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
    if (command === 'enrollment-secret') return await enrollmentSecretCommand(database.db, sub, rest, out);
    if (command === 'mfa' && sub === 'reset') {
      // Two-factor of any account, the last SUPERADMIN's too (whom no one in the console may reset).
      const { values } = parseArgs({ args: rest, options: { email: { type: 'string' } }, strict: true });
      if (!values.email) {
        console.error(`--email is required.\n${USAGE}`);
        return 2;
      }
      out((await resetMfa(database.db, { label: 'cli' }, values.email, null)).message);
      return 0;
    }
    console.error(USAGE);
    return 2;
  } finally {
    await database.close();
  }
}

async function enrollmentSecretCommand(
  db: Kysely<DB>,
  sub: string | undefined,
  args: string[],
  out: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { name: { type: 'string' }, expires: { type: 'string' } },
    strict: true,
  });
  const by = 'cli';
  if (sub === 'list') {
    for (const secret of await enrollmentSecrets(db)) {
      out(
        `${secret.name}\t${secret.state}\tcreated ${secret.createdAt} by ${secret.createdBy}` +
          `${secret.expiresAt ? `\texpires ${secret.expiresAt}` : ''}` +
          `${secret.lastUsedAt ? `\tlast used ${secret.lastUsedAt}` : ''}`,
      );
    }
    return 0;
  }
  const name = enrollmentSecretNameSchema.safeParse(values.name ?? '');
  if (!name.success) {
    console.error(`--name ${name.error.issues[0]?.message ?? 'is required'}.\n${USAGE}`);
    return 2;
  }
  if (sub === 'add') {
    if (values.expires !== undefined && Number.isNaN(Date.parse(values.expires))) {
      console.error(`--expires must be an ISO date-time such as 2027-01-31T00:00:00Z.\n${USAGE}`);
      return 2;
    }
    const added = await addEnrollmentSecret(db, {
      name: name.data,
      expiresAt: values.expires,
      createdBy: by,
    });
    await appendAudit(db, {
      actor: { label: by },
      action: 'enrollment.secret.add',
      target: added.name,
      result: 'success',
      details: { id: added.id, expiresAt: added.expiresAt?.toISOString() ?? null },
    });
    out(`Enrollment secret ${added.name}: ${added.secret}`);
    out('Copy it now: it is not shown again.');
    return 0;
  }
  if (sub === 'revoke') {
    const revoked = await revokeEnrollmentSecret(db, { name: name.data }, by);
    await appendAudit(db, {
      actor: { label: by },
      action: 'enrollment.secret.revoke',
      target: revoked.name,
      result: 'success',
      details: { id: revoked.id },
    });
    out(ENROLLMENT_MESSAGES.secretRevoked(revoked.name));
    return 0;
  }
  console.error(USAGE);
  return 2;
}

runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error) => {
    if (error instanceof ConfigError || error instanceof AppError) console.error(error.message);
    else console.error(`Failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(error instanceof AppError ? 2 : 1);
  },
);
