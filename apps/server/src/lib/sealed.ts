/**
 * Secrets the server must read back (a TOTP secret, a webhook signing secret), sealed at rest with
 * AES-256-GCM under a 32-byte key. `context` is bound in as associated data (the table and row a value
 * belongs to), so a sealed value copied to another row does not open. The format is versioned:
 * `v1:` + base64(iv ‖ tag ‖ ciphertext).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export function seal(key: Buffer, context: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
}

/** The plaintext, or null when it does not open (another key, another context, a damaged value). */
export function unseal(key: Buffer, context: string, value: string): string | null {
  const [version, body] = value.split(':');
  if (version !== VERSION || !body) return null;
  const bytes = Buffer.from(body, 'base64');
  if (bytes.length <= IV_BYTES + TAG_BYTES) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, bytes.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    const opened = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
    return opened.toString('utf8');
  } catch {
    return null;
  }
}
