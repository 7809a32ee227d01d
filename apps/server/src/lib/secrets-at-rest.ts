/**
 * Secrets at rest (docs/operations.md § Secrets at rest). What the server must read back and keeps in the
 * database's `settings` (the envelope key, the key that seals TOTP secrets) is sealed with AES-256-GCM
 * (lib/sealed.ts) under SECRETS_KEY, the setting's name bound in as associated data. SECRETS_KEY comes
 * from the environment; unset, a key is generated once into DATA_DIR/secrets.key (mode 0600), like the
 * embedded database beside it. A copy of the database (a backup, a dump) then holds no usable secret.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seal, unseal } from './sealed';

export const SECRETS_KEY_FILE = 'secrets.key';

/** A sealed value starts with the format's version. */
export const isSealed = (value: string) => value.startsWith('v1:');

export const settingContext = (key: string) => `settings:${key}`;

export function sealSetting(secretsKey: Buffer, key: string, value: string): string {
  return seal(secretsKey, settingContext(key), value);
}

/** The plaintext, or null when `secretsKey` does not open it. */
export function openSetting(secretsKey: Buffer, key: string, sealed: string): string | null {
  return unseal(secretsKey, settingContext(key), sealed);
}

export function parseSecretsKey(base64: string): Buffer {
  const key = Buffer.from(base64.trim(), 'base64');
  if (key.length !== 32) throw new Error('SECRETS_KEY must be 32 bytes written as base64');
  return key;
}

export function generateSecretsKey(): string {
  return randomBytes(32).toString('base64');
}

export interface SecretsKey {
  key: Buffer;
  /** Where it came from, for messages: `SECRETS_KEY` or the file's path. */
  source: string;
  /** The file, when the key lives in DATA_DIR. */
  file: string | null;
}

/** SECRETS_KEY when configured; otherwise DATA_DIR/secrets.key, created on first use. */
export function loadSecretsKey(configured: string | undefined, dataDir: string): SecretsKey {
  const key = loadKey({ configured, name: 'SECRETS_KEY', dataDir, fileName: SECRETS_KEY_FILE, create: true });
  if (!key) throw new Error('unreachable: a created key file holds a key');
  return key;
}

export interface KeyLocation {
  /** The variable's value, when set. */
  configured: string | undefined;
  /** The variable's name, for messages. */
  name: string;
  dataDir: string;
  /** The key file in DATA_DIR used when the variable is unset. */
  fileName: string;
  /** Generate the file (mode 0600) when it does not exist yet; else answer null. */
  create: boolean;
}

/** A 32-byte key from its variable, else from its file in DATA_DIR (created once when asked). */
export function loadKey({ configured, name, dataDir, fileName, create }: KeyLocation): SecretsKey | null {
  const parse = (base64: string) => {
    const key = Buffer.from(base64.trim(), 'base64');
    if (key.length !== 32) throw new Error(`${name} must be 32 bytes written as base64`);
    return key;
  };
  if (configured) return { key: parse(configured), source: name, file: null };
  const file = join(dataDir, fileName);
  if (!existsSync(file)) {
    if (!create) return null;
    mkdirSync(dataDir, { recursive: true });
    try {
      // 'wx': two processes starting at once keep the first key written.
      writeFileSync(file, `${generateSecretsKey()}\n`, { mode: 0o600, flag: 'wx' });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  try {
    return { key: parse(readFileSync(file, 'utf8')), source: file, file };
  } catch (error) {
    throw new Error(`${file} does not hold a key: ${(error as Error).message}`);
  }
}

/** Replaces the key file (the rotation's last step): written beside it, then renamed over it. */
export function writeSecretsKeyFile(file: string, base64: string): void {
  const next = `${file}.next`;
  writeFileSync(next, `${base64}\n`, { mode: 0o600 });
  renameSync(next, file);
}

/** Thrown at start when the database's sealed settings do not open with the key given. */
export class SecretsKeyError extends Error {
  constructor(source: string, setting: string) {
    super(
      `The secrets key (${source}) does not open the ${setting} sealed in the database. Start with the key ` +
        'it was sealed with, or re-seal under a new key with `npm run cli -- secrets rotate` ' +
        '(docs/operations.md § Secrets at rest).',
    );
    this.name = 'SecretsKeyError';
  }
}
