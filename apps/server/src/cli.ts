/**
 * Operator CLI: `npm run cli -- user create --email … --phone … --level … --password … [--permissions a,b]`,
 * `npm run cli -- enrollment-secret add|list|revoke …`, `npm run cli -- mfa reset --email …`,
 * `npm run cli -- audit verify|seal`, `npm run cli -- secrets rotate`, `npm run cli -- migrate` and
 * `npm run cli -- attestation-status refresh`. With the embedded database, stop the server first (one
 * process at a time); attestation-status opens no database.
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
import { type Config, ConfigError, loadConfig } from './config';
import { AppError } from './core/errors';
import { openDatabase } from './db/database';
import { prepareSchema } from './db/roles';
import type { DB } from './db/types';
import { generatePassword } from './lib/secrets';
import {
  generateSecretsKey,
  loadSecretsKey,
  parseSecretsKey,
  SecretsKeyError,
  writeSecretsKeyFile,
} from './lib/secrets-at-rest';
import {
  type AuditAnchor,
  existingAnchorKey,
  formatAnchor,
  parseAnchor,
  verifyAnchors,
} from './modules/audit/anchor';
import { appendAudit, verifyAuditChain } from './modules/audit/repository';
import { AuditSealer } from './modules/audit/sealer';
import { GOOGLE_STATUS_URL, refreshRevocationList } from './modules/devices/attestation-status';
import { EnrollmentService } from './modules/enrollment/service';
import { resetMfa } from './modules/mfa/service';
import { resealSettings } from './modules/settings/secrets';
import { createUser } from './modules/users/service';

const USAGE = `Usage:
  npm run cli -- migrate
  npm run cli -- user create --email <email> --phone <10 digits> --level <USER|ADMIN|SUPERADMIN>
                             [--password <password>] [--permissions <name,name,…>] [--retailer-phone <10 digits>]
  npm run cli -- enrollment-secret add --name <name> [--expires <ISO date-time>]
  npm run cli -- enrollment-secret list
  npm run cli -- enrollment-secret revoke --name <name>
  npm run cli -- mfa reset --email <email>
  npm run cli -- audit verify [--anchor <lendlock-anchor-v1:…>]…
  npm run cli -- audit seal
  npm run cli -- secrets rotate
  npm run cli -- attestation-status refresh [--from <URL or file>] [--to <file>]
Without --password a password is generated and printed once (a given one must have PASSWORD_MIN_LENGTH
characters and not be on the list of breached passwords). An enrollment secret is printed once, when it
is added; only its hash is kept. audit verify recomputes the audit log's hash chain and reports the first
broken link (exit 1) or OK, then checks the chain's anchors (kept, and each --anchor line the server
logged as 'audit anchor'): a deleted tail or a rewritten chain fails them (exit 1); audit seal chains the rows not sealed yet. secrets rotate re-seals the
secrets kept in the database under NEW_SECRETS_KEY (or, with the key file in DATA_DIR, a new key
written there). attestation-status refresh replaces the attestation revocation status list (--to, by
default ATTESTATION_STATUS_FILE) with Google's (--from, by default ${GOOGLE_STATUS_URL}) once it
parses.`;

export async function runCli(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const [command, sub, ...rest] = argv;
  const config = loadConfig();
  if (command === 'attestation-status' && sub === 'refresh') return await refreshStatus(config, rest, out);
  const database = await openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: 2,
  });
  try {
    // As the owner role when DATABASE_OWNER_URL is set (docs/operations.md § Database roles).
    await prepareSchema(config, database);
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
      const permissions = values.permissions
        .split(',')
        .map((p) => p.trim())
        .filter(Boolean);
      const retailerPhone = values['retailer-phone']?.trim() || null;
      await createUser(
        database.db,
        {
          email: values.email,
          phone: values.phone ?? null,
          password,
          userlevel: level as UserLevel,
          permissions,
          retailerPhone,
        },
        { allowedEmailDomains: config.allowedEmailDomains, passwordMinLength: config.passwordMinLength },
        // The same row as an account added in User Management, its actor the CLI.
        {
          actor: { label: 'cli' },
          action: 'user.add',
          target: values.email.trim(),
          result: 'success',
          details: { userlevel: level, permissions, retailerPhone },
        },
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
    if (command === 'audit' && (sub === 'verify' || sub === 'seal')) {
      if (sub === 'seal') {
        const key = existingAnchorKey(config.auditAnchorKey, config.dataDir);
        const sealer = new AuditSealer({
          db: database.db,
          log: { info() {}, warn() {} } as never,
          anchor: key ? { key, intervalMs: 0 } : undefined,
        });
        out(`Sealed ${await sealer.sealNow(true)} audit rows.`);
        const anchor = await sealer.anchorNow();
        if (anchor) out(`Anchored the head: ${formatAnchor(anchor)}`);
        return 0;
      }
      return await verifyAudit(database.db, config, rest, out);
    }
    if (command === 'secrets' && sub === 'rotate') return await rotateSecrets(database.db, config, out);
    console.error(USAGE);
    return 2;
  } finally {
    await database.close();
  }
}

/** Replaces the revocation status list file with a fresh copy, checked before it replaces the old one. */
async function refreshStatus(
  config: ReturnType<typeof loadConfig>,
  args: string[],
  out: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { from: { type: 'string', default: GOOGLE_STATUS_URL }, to: { type: 'string' } },
    strict: true,
  });
  const target = values.to ?? config.attestationStatusFile;
  if (!target) {
    console.error(`Set ATTESTATION_STATUS_FILE or give --to.\n${USAGE}`);
    return 2;
  }
  try {
    const entries = await refreshRevocationList(values.from, target);
    out(`Attestation status list written to ${target}: ${entries} entries.`);
    return 0;
  } catch (error) {
    console.error(`Attestation status list not refreshed (${target} unchanged): ${(error as Error).message}`);
    return 1;
  }
}

/**
 * `audit verify [--anchor <line>]…`: the chain from its first link, then every anchor kept in the
 * database and every one given (lines the sealer logged as `audit anchor`) against it. Exit 1 when the
 * chain or an anchor is broken.
 */
async function verifyAudit(
  db: Kysely<DB>,
  config: Config,
  args: string[],
  out: (line: string) => void,
): Promise<number> {
  const { values } = parseArgs({
    args,
    options: { anchor: { type: 'string', multiple: true } },
    strict: true,
  });
  const given: AuditAnchor[] = [];
  for (const line of values.anchor ?? []) {
    const anchor = parseAnchor(line);
    if (!anchor) {
      console.error(`Not an anchor: ${line} (expected lendlock-anchor-v1:<seq>:<hash>:<mac>).`);
      return 2;
    }
    given.push(anchor);
  }
  const result = await verifyAuditChain(db);
  let broken = false;
  if (result.broken) {
    out(
      `Audit chain BROKEN at audit row ${result.broken.auditId} (link ${result.broken.seq}): ` +
        `${result.broken.reason}. ${result.sealed} links before it are intact.`,
    );
    broken = true;
  } else {
    out(
      `Audit chain OK: ${result.sealed} rows sealed${result.head ? `, head ${result.head}` : ''}; ` +
        `${result.unsealed} not sealed yet` +
        `${result.firstUnsealed === null ? '' : ` (from row ${result.firstUnsealed})`}.`,
    );
  }
  const key = existingAnchorKey(config.auditAnchorKey, config.dataDir);
  if (!key) {
    out('Anchors not checked: no anchor key (AUDIT_ANCHOR_KEY, or audit-anchor.key in DATA_DIR).');
    return broken || given.length > 0 ? 1 : 0;
  }
  const anchors = await verifyAnchors(db, key, given, result.sealed);
  for (const problem of anchors.problems) {
    out(`Anchor BROKEN (${problem.from}) ${problem.anchor}: ${problem.reason}.`);
  }
  if (anchors.problems.length > 0) broken = true;
  else out(`Anchors OK: ${anchors.checked} checked${anchors.newest ? `, newest ${anchors.newest}` : ''}.`);
  return broken ? 1 : 0;
}

/**
 * Re-seals every secret kept in `settings` under a new key, in one transaction: NEW_SECRETS_KEY when the
 * key comes from SECRETS_KEY (then restart every instance with SECRETS_KEY set to it), else a new key
 * written to DATA_DIR/secrets.key once the transaction has committed.
 */
async function rotateSecrets(
  db: Kysely<DB>,
  config: ReturnType<typeof loadConfig>,
  out: (line: string) => void,
): Promise<number> {
  const current = loadSecretsKey(config.secretsKey, config.dataDir);
  const given = process.env.NEW_SECRETS_KEY;
  if (!given && !current.file) {
    console.error('Set NEW_SECRETS_KEY to the new key (32 bytes as base64, e.g. `openssl rand -base64 32`).');
    return 2;
  }
  let next: Buffer;
  const nextBase64 = given ?? generateSecretsKey();
  try {
    next = parseSecretsKey(nextBase64);
  } catch {
    console.error('NEW_SECRETS_KEY must be 32 bytes written as base64.');
    return 2;
  }
  try {
    const names = await db.transaction().execute((trx) => resealSettings(trx, current, next));
    if (!given && current.file) writeSecretsKeyFile(current.file, nextBase64);
    await appendAudit(db, {
      actor: { label: 'cli' },
      action: 'secrets.rotate',
      result: 'success',
      details: { settings: names },
    });
    out(`Re-sealed ${names.length} secrets (${names.join(', ') || 'none yet'}) under the new key.`);
    out(
      given
        ? 'Restart every instance with SECRETS_KEY set to the new key.'
        : `The new key is in ${current.file}; restart the server.`,
    );
    return 0;
  } catch (error) {
    if (error instanceof SecretsKeyError) {
      console.error(error.message);
      return 1;
    }
    throw error;
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
  const enrollment = new EnrollmentService({ db });
  if (sub === 'list') {
    for (const secret of await enrollment.enrollmentSecrets()) {
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
    const added = await enrollment.addEnrollmentSecret(
      { name: name.data, expiresAt: values.expires, createdBy: by },
      { actor: { label: by } },
    );
    out(`Enrollment secret ${added.name}: ${added.secret}`);
    out('Copy it now: it is not shown again.');
    return 0;
  }
  if (sub === 'revoke') {
    const revoked = await enrollment.revokeEnrollmentSecret({ name: name.data }, by, {
      actor: { label: by },
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
