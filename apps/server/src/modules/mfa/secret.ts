/**
 * TOTP secrets at rest: sealed with AES-256-GCM (lib/sealed.ts) under MFA_SECRET_KEY (or the key
 * generated into the settings table when it is unset), the account id bound in as associated data. Unlike
 * a password, a TOTP secret cannot be stored as a hash (the server must compute codes from it), so a copy
 * of the table, a backup of it or a log line must not hand out second factors; and a sealed secret moved
 * to another account's row does not open.
 */
import { seal, unseal } from '../../lib/sealed';

const associated = (userId: number) => `user_mfa:${userId}`;

export function sealSecret(key: Buffer, userId: number, secret: string): string {
  return seal(key, associated(userId), secret);
}

/** The secret, or null when it does not open (another key, another account, a damaged value). */
export function openSecret(key: Buffer, userId: number, value: string): string | null {
  return unseal(key, associated(userId), value);
}
