/**
 * Secrets at rest: what the server keeps in `settings` is sealed under SECRETS_KEY (or
 * DATA_DIR/secrets.key), a wrong key stops the start with a clear message, a value an older version left
 * in plaintext is sealed in place, and enrollment secrets are kept as hashes only.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MESSAGES } from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../src/app';
import { SECRETS_KEY_FILE } from '../src/lib/secrets-at-rest';
import { type AuditAnchor, anchorKey, formatAnchor } from '../src/modules/audit/anchor';
import { AuditSealer } from '../src/modules/audit/sealer';
import { EnrollmentService } from '../src/modules/enrollment/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildConfig } from './factories';

const KEY = Buffer.alloc(32, 1).toString('base64');
const OTHER = Buffer.alloc(32, 2).toString('base64');

const settings = async (database: TestDatabase) =>
  Object.fromEntries(
    (await database.db.selectFrom('settings').select(['key', 'value']).execute()).map((r) => [
      r.key,
      r.value,
    ]),
  );

describe.each(databaseKinds())('secrets at rest (%s)', (kind) => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
  });
  afterAll(async () => {
    await database.close();
  });

  const start = (secretsKey: string | undefined, dataDir = '/nonexistent') =>
    buildApp({ config: buildConfig({ secretsKey, dataDir }), database, logger: false, deviceChannel: false });

  it('keeps the envelope key and the TOTP sealing key sealed, never in plaintext', async () => {
    const app = await start(KEY);
    const envelopeKey = app.ctx.envelopeKey;
    await app.close();
    const stored = await settings(database);
    expect(stored.envelope_key).toMatch(/^v1:/);
    expect(stored.mfa_secret_key).toMatch(/^v1:/);
    const dump = JSON.stringify(stored);
    expect(dump).not.toContain(envelopeKey);
    // The same key opens them again: a restart keeps the envelope key devices and consoles use.
    const again = await start(KEY);
    expect(again.ctx.envelopeKey).toBe(envelopeKey);
    await again.close();
  });

  it('stops the start with a clear message under another key, changing nothing', async () => {
    const before = await settings(database);
    await expect(start(OTHER)).rejects.toThrow(
      /^The secrets key \(SECRETS_KEY\) does not open the mfa_secret_key sealed in the database\. .*npm run cli -- secrets rotate/,
    );
    expect(await settings(database)).toEqual(before);
  });

  it('seals a value an older version left in plaintext', async () => {
    const plain = Buffer.alloc(32, 9).toString('base64');
    await database.db.deleteFrom('settings').where('key', '=', 'envelope_key').execute();
    await database.db.insertInto('settings').values({ key: 'envelope_key', value: plain }).execute();
    const app = await start(KEY);
    expect(app.ctx.envelopeKey).toBe(plain);
    await app.close();
    const stored = await settings(database);
    expect(stored.envelope_key).toMatch(/^v1:/);
    expect(stored.envelope_key).not.toContain(plain);
  });

  it('generates the key into DATA_DIR (mode 0600) when SECRETS_KEY is unset, and uses it again', async () => {
    await database.db.deleteFrom('settings').execute();
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-secrets-'));
    const first = await start(undefined, dataDir);
    const envelopeKey = first.ctx.envelopeKey;
    await first.close();
    const file = join(dataDir, SECRETS_KEY_FILE);
    expect(Buffer.from(readFileSync(file, 'utf8').trim(), 'base64')).toHaveLength(32);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const second = await start(undefined, dataDir);
    expect(second.ctx.envelopeKey).toBe(envelopeKey);
    await second.close();
  });

  it('keeps an enrollment secret as its SHA-256 only', async () => {
    const added = await new EnrollmentService({ db: database.db }).addEnrollmentSecret({
      name: 'at-rest',
      createdBy: 'test',
    });
    const rows = await database.db.selectFrom('enrollment_secrets').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain(added.secret);
    expect(rows.find((r) => r.name === 'at-rest')?.secret_hash).toMatch(/^[0-9a-f]{64}$/);
  });
});

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

function cli(args: string[], env: Record<string, string>) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'apps/server/src/cli.ts', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 120_000,
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
  });
}

describe('npm run cli -- secrets rotate, audit verify (embedded database)', () => {
  it('re-seals every secret under a new key file; the old key no longer opens them', {
    timeout: 240_000,
  }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'lendlock-rotate-'));
    cpSync(inject('pgliteTemplateDir'), dataDir, { recursive: true });
    const first = cli(['audit', 'verify'], { DATA_DIR: dataDir });
    expect(first.stdout).toMatch(/^Audit chain OK: /m);
    // The server's first start seals its generated secrets under DATA_DIR/secrets.key.
    const { openDatabase } = await import('../src/db/database');
    let database = await openDatabase({ dataDir });
    const app = await buildApp({
      config: buildConfig({ secretsKey: undefined, dataDir }),
      database,
      logger: false,
      deviceChannel: false,
    });
    const envelopeKey = app.ctx.envelopeKey;
    await app.close();
    await database.close();
    const oldKey = readFileSync(join(dataDir, SECRETS_KEY_FILE), 'utf8');

    const rotated = cli(['secrets', 'rotate'], { DATA_DIR: dataDir });
    expect(rotated.stderr).toBe('');
    expect(rotated.stdout).toContain(
      'Re-sealed 3 secrets (envelope_key, mfa_secret_key, webhook_secret_key) under the new key.',
    );
    expect(readFileSync(join(dataDir, SECRETS_KEY_FILE), 'utf8')).not.toBe(oldKey);
    expect(existsSync(join(dataDir, `${SECRETS_KEY_FILE}.next`))).toBe(false);

    database = await openDatabase({ dataDir });
    try {
      const config = buildConfig({ secretsKey: undefined, dataDir });
      const reopened = await buildApp({ config, database, logger: false, deviceChannel: false });
      expect(reopened.ctx.envelopeKey).toBe(envelopeKey);
      await reopened.close();
      await expect(
        buildApp({
          config: { ...config, secretsKey: oldKey.trim() },
          database,
          logger: false,
          deviceChannel: false,
        }),
      ).rejects.toThrow(/does not open/);
      const audit = await database.db
        .selectFrom('audit_log')
        .select('action')
        .where('action', '=', 'secrets.rotate')
        .execute();
      expect(audit).toHaveLength(1);
    } finally {
      await database.close();
    }

    // With SECRETS_KEY set, the new key must be given.
    const missing = cli(['secrets', 'rotate'], { DATA_DIR: dataDir, SECRETS_KEY: KEY });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('Set NEW_SECRETS_KEY');

    // audit verify names the row a superuser changed behind the triggers' back; the CLI refuses a
    // breached password.
    database = await openDatabase({ dataDir });
    let edited: number;
    let anchor: string;
    try {
      // The head is anchored with DATA_DIR/audit-anchor.key (created here, as a server start without
      // AUDIT_ANCHOR_KEY creates it), which the CLI then reads.
      const sealer = new AuditSealer({
        db: database.db,
        log: { info() {}, warn() {} } as never,
        anchor: { key: anchorKey(undefined, dataDir), intervalMs: 0 },
      });
      await sealer.sealNow(true);
      anchor = formatAnchor((await sealer.anchorNow()) as AuditAnchor);
      edited = Number(
        (await database.db.selectFrom('audit_log').select('id').orderBy('id').executeTakeFirstOrThrow()).id,
      );
      await database.db.transaction().execute(async (trx) => {
        // As the test's superuser, not the app's row-level-security role (ADR 0011).
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        await sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`.execute(trx);
        await sql`UPDATE audit_log SET actor = 'someone else' WHERE id = ${edited}`.execute(trx);
        await sql`ALTER TABLE audit_log ENABLE ALWAYS TRIGGER audit_log_no_update`.execute(trx);
      });
    } finally {
      await database.close();
    }
    const verify = cli(['audit', 'verify', '--anchor', anchor], { DATA_DIR: dataDir });
    expect(verify.status).toBe(1);
    expect(verify.stdout).toContain(
      `Audit chain BROKEN at audit row ${edited} (link 1): the audit row or its link was changed.`,
    );
    // The links themselves were not touched: the kept anchor and the one given still hold.
    expect(verify.stdout).toContain(`Anchors OK: 2 checked, newest ${anchor}.`);
    // The owner recomputes the whole chain over the edited row: it verifies, the anchor does not.
    database = await openDatabase({ dataDir });
    try {
      await database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        await sql`ALTER TABLE audit_chain DISABLE TRIGGER audit_chain_no_update`.execute(trx);
        await sql`DELETE FROM audit_chain`.execute(trx);
        await sql`ALTER TABLE audit_chain ENABLE ALWAYS TRIGGER audit_chain_no_update`.execute(trx);
      });
      await new AuditSealer({ db: database.db, log: { warn() {} } as never }).sealNow(true);
    } finally {
      await database.close();
    }
    const rewritten = cli(['audit', 'verify', '--anchor', anchor], { DATA_DIR: dataDir });
    expect(rewritten.status).toBe(1);
    expect(rewritten.stdout).toMatch(/^Audit chain OK: /m);
    const seq = anchor.split(':')[1];
    for (const from of ['kept', 'given']) {
      expect(rewritten.stdout).toContain(
        `Anchor BROKEN (${from}) ${anchor}: link ${seq} no longer carries the anchored hash (the chain was rewritten).`,
      );
    }
    const notAnchor = cli(['audit', 'verify', '--anchor', 'lendlock-anchor-v1:1:beef'], {
      DATA_DIR: dataDir,
    });
    expect(notAnchor.status).toBe(2);
    expect(notAnchor.stderr).toContain('Not an anchor: lendlock-anchor-v1:1:beef');
    const weak = cli(
      [
        'user',
        'create',
        '--email',
        'weak@lendlock.com',
        '--phone',
        '9123456789',
        '--password',
        'Qwerty123456',
      ],
      { DATA_DIR: dataDir },
    );
    expect(weak.status).toBe(2);
    expect(weak.stderr.trim()).toBe(MESSAGES.passwordTooCommon);
  });
});
