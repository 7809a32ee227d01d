import { createHash, randomBytes } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

/** @node-rs/argon2's const enum Algorithm.Argon2id (const enums cannot be imported under verbatimModuleSyntax). */
const ARGON2ID = 2;

/** A random, URL-safe secret (session tokens, API keys, generated passwords). */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** High-entropy secrets (tokens, keys) are stored as their SHA-256; only passwords need argon2. */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

export function hashPassword(password: string): Promise<string> {
  return hash(password, { algorithm: ARGON2ID });
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** A real hash to verify against when the account does not exist, so timing does not tell. */
let dummyHash: Promise<string> | undefined;
export function dummyPasswordHash(): Promise<string> {
  dummyHash ??= hashPassword(randomSecret());
  return dummyHash;
}

/** A readable generated password: 20 characters of base64url. */
export function generatePassword(): string {
  return randomSecret(15);
}
