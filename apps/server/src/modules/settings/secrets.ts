/**
 * The server's own secrets kept in `settings` (generated once and shared by every instance), sealed at
 * rest under the secrets key (lib/secrets-at-rest.ts).
 */
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { isSealed, openSetting, SecretsKeyError, sealSetting } from '../../lib/secrets-at-rest';
import { insertSettingIfAbsent, lockAllSettings, readSetting, replaceSetting } from './repository';

/** The settings that hold secrets. */
export const SECRET_SETTINGS = ['envelope_key', 'mfa_secret_key', 'webhook_secret_key'] as const;
export type SecretSetting = (typeof SECRET_SETTINGS)[number];

/**
 * A configured secret as it is; otherwise the one kept in `settings`, generated (and sealed) by the first
 * instance that needs it. A value written in plaintext by an older version is sealed in place. Throws
 * SecretsKeyError when the key does not open the stored value.
 */
export async function resolveSecretSetting(
  db: Kysely<DB>,
  secrets: () => { key: Buffer; source: string },
  name: SecretSetting,
  configured: string | undefined,
  generate: () => string,
): Promise<string> {
  if (configured) return configured;
  const { key, source } = secrets();
  await insertSettingIfAbsent(db, name, sealSetting(key, name, generate()));
  const stored = await readSetting(db, name);
  if (stored === null) throw new Error(`settings ${name} vanished`);
  if (!isSealed(stored)) {
    await replaceSetting(db, name, stored, sealSetting(key, name, stored));
    return stored;
  }
  const opened = openSetting(key, name, stored);
  if (opened === null) throw new SecretsKeyError(source, name);
  return opened;
}

/**
 * Re-seals every sealed setting (and seals any left in plaintext) from `oldKey` to `newKey`, in the
 * caller's transaction. Throws SecretsKeyError, changing nothing, when `oldKey` does not open one.
 * Returns the names re-sealed.
 */
export async function resealSettings(
  trx: Kysely<DB>,
  oldKey: { key: Buffer; source: string },
  newKey: Buffer,
): Promise<string[]> {
  const rows = await lockAllSettings(trx);
  const secret = rows.filter(
    (row) => isSealed(row.value) || (SECRET_SETTINGS as readonly string[]).includes(row.key),
  );
  const plain = secret.map((row) => {
    const value = isSealed(row.value) ? openSetting(oldKey.key, row.key, row.value) : row.value;
    if (value === null) throw new SecretsKeyError(oldKey.source, row.key);
    return { ...row, plain: value };
  });
  for (const row of plain)
    await replaceSetting(trx, row.key, row.value, sealSetting(newKey, row.key, row.plain));
  return plain.map((row) => row.key);
}
