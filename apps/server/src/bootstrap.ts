/**
 * First start: on an empty database create the first SUPERADMIN (from BOOTSTRAP_SUPERADMIN_* or with a
 * generated password printed once). On an empty embedded database with demo data enabled, also an
 * ADMIN and a USER with a few permissions, printed the same way. No password is hard-coded.
 */
import type { UserLevel } from '@lendlock/contract';
import type { Config } from './config';
import type { Database } from './db/database';
import { passwordProblem } from './lib/password-policy';
import { generatePassword } from './lib/secrets';
import { appendAudit } from './modules/audit/repository';
import { countUsers, lockBootstrap } from './modules/users/repository';
import { createUser } from './modules/users/service';

export interface BootstrapResult {
  /** `password` is null when it came from BOOTSTRAP_SUPERADMIN_PASSWORD (never printed). */
  created: { level: UserLevel; email: string; password: string | null }[];
  demo: boolean;
}

export const DEMO_USER_PERMISSIONS = [
  'deviceDetails',
  'lockDevice',
  'unlockDevice',
  'releaseDevice',
  'reports',
  'auditReport',
];

/** The line printed for each created account; a configured password is not repeated. */
export function credentialsLine(level: UserLevel, email: string, password: string | null): string {
  return `${level} login: ${email} / ${password ?? '(the password in BOOTSTRAP_SUPERADMIN_PASSWORD)'}`;
}

export function wantsDemo(config: Config, database: Database): boolean {
  return config.demoData === 'on' || (config.demoData === 'auto' && database.kind === 'pglite');
}

export async function bootstrap(config: Config, database: Database): Promise<BootstrapResult> {
  const { db } = database;
  const domain = config.allowedEmailDomains[0] ?? 'lendlock.com';
  const rules = {
    allowedEmailDomains: config.allowedEmailDomains,
    passwordMinLength: config.passwordMinLength,
  };

  // Several instances may start at once on an empty PostgreSQL: one creates, the others see the users.
  return db.transaction().execute(async (trx) => {
    await lockBootstrap(trx);
    if ((await countUsers(trx)) > 0) return { created: [], demo: false };

    const created: BootstrapResult['created'] = [];
    const superEmail = config.bootstrapSuperadminEmail ?? `superadmin@${domain}`;
    const superPassword = config.bootstrapSuperadminPassword ?? generatePassword();
    // The same password rule as every account (length, breached list); a start with a weak one stops.
    const problem = passwordProblem(superPassword, config.passwordMinLength);
    if (problem) throw new Error(`BOOTSTRAP_SUPERADMIN_PASSWORD: ${problem}`);
    await createUser(
      trx,
      { email: superEmail, phone: null, password: superPassword, userlevel: 'SUPERADMIN', permissions: [] },
      { ...rules, skipDomainCheck: true },
    );
    created.push({
      level: 'SUPERADMIN',
      email: superEmail,
      password: config.bootstrapSuperadminPassword ? null : superPassword,
    });

    const demo = wantsDemo(config, database);
    if (demo) {
      const accounts: { level: UserLevel; email: string; phone: string; permissions: string[] }[] = [
        { level: 'ADMIN', email: `admin@${domain}`, phone: '9000000001', permissions: [] },
        { level: 'USER', email: `user@${domain}`, phone: '9000000002', permissions: DEMO_USER_PERMISSIONS },
      ];
      for (const account of accounts) {
        const password = generatePassword();
        await createUser(trx, { ...account, userlevel: account.level, password }, rules);
        created.push({ level: account.level, email: account.email, password });
      }
    }
    await appendAudit(trx, {
      actor: null,
      action: 'bootstrap',
      result: 'success',
      details: { accounts: created.map((c) => ({ level: c.level, email: c.email })) },
    });
    return { created, demo };
  });
}
