/**
 * TOTP secrets at rest: sealed with AES-256-GCM under MFA_SECRET_KEY (or the key generated into the
 * settings table when it is unset), the account id bound in as associated data. Unlike a password, a TOTP
 * secret cannot be stored as a hash (the server must compute codes from it), so a copy of the table, a
 * backup of it or a log line must not hand out second factors; and a sealed secret moved to another
 * account's row does not open.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const associated = (userId: number) => Buffer.from(`user_mfa:${userId}`);

export function sealSecret(key: Buffer, userId: number, secret: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(associated(userId));
  const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

/** The secret, or null when it does not open (another key, another account, a damaged value). */
export function openSecret(key: Buffer, userId: number, value: string): string | null {
  const [version, body] = value.split(':');
  if (version !== VERSION || !body) return null;
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(associated(userId));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const opened = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return opened.toString('utf8');
  } catch {
    return null;
  }
}
