/**
 * The revocation status list of attestation keys, in Google's format (the JSON answered by
 * https://android.googleapis.com/attestation/status):
 *
 *   { "entries": { "<serial number, lowercase hex>": { "status": "REVOKED", "reason": "KEY_COMPROMISE" } } }
 *
 * A certificate whose serial number is listed with any status (REVOKED or SUSPENDED) fails the
 * attestation. The server reads the list from the file `ATTESTATION_STATUS_FILE` names, again whenever
 * the file changes, so `npm run cli -- attestation-status refresh` takes effect without a restart. A
 * configured file that is missing or does not parse refuses every chain: a list that cannot be read
 * proves nothing is revoked.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import type { AttestationPolicy } from './attestation';

/** Where Google publishes the list. */
export const GOOGLE_STATUS_URL = 'https://android.googleapis.com/attestation/status';

export interface RevocationEntry {
  status: string;
  reason?: string;
}

/** The list, or why it could not be read. */
export type RevocationStatus = { entries: ReadonlyMap<string, RevocationEntry> } | { problem: string };

/** A serial number as the list writes it: lowercase hex without leading zeros. */
export function serialKey(serial: string): string {
  return serial.toLowerCase().replace(/^0+(?=.)/, '');
}

/** Parses the list; throws an Error with a clear message when it is not in Google's format. */
export function parseRevocationList(text: string): ReadonlyMap<string, RevocationEntry> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error('The attestation status list is not JSON.');
  }
  const entries = (json as { entries?: unknown } | null)?.entries;
  if (typeof entries !== 'object' || entries === null || Array.isArray(entries)) {
    throw new Error('The attestation status list has no "entries" object.');
  }
  const list = new Map<string, RevocationEntry>();
  for (const [serial, entry] of Object.entries(entries)) {
    const status = (entry as { status?: unknown } | null)?.status;
    if (!/^[0-9a-fA-F]+$/.test(serial) || typeof status !== 'string') {
      throw new Error(
        `The attestation status list's entry ${JSON.stringify(serial)} is not in Google's format.`,
      );
    }
    const reason = (entry as { reason?: unknown }).reason;
    list.set(serialKey(serial), { status, ...(typeof reason === 'string' ? { reason } : {}) });
  }
  return list;
}

/** The app and revocation checks of each registration's attestation, the list read at that time. */
export function attestationChecks(settings: {
  packageName: string | null;
  signatureDigests: readonly string[];
  statusFile: string | null;
}): () => AttestationPolicy {
  const revocations = settings.statusFile ? revocationFile(settings.statusFile) : null;
  return () => ({
    packageName: settings.packageName,
    signatureDigests: settings.signatureDigests,
    revocations: revocations ? revocations() : null,
  });
}

/** Reads the list from `path`, again only when the file's size or modification time changed. */
function revocationFile(path: string): () => RevocationStatus {
  let cached: { stamp: string; status: RevocationStatus } | null = null;
  return () => {
    let stamp: string;
    try {
      const stat = statSync(path);
      stamp = `${stat.size}:${stat.mtimeMs}`;
    } catch {
      cached = null;
      return { problem: 'The attestation status list could not be read, so revocation cannot be ruled out.' };
    }
    if (cached?.stamp !== stamp) {
      let status: RevocationStatus;
      try {
        status = { entries: parseRevocationList(readFileSync(path, 'utf8')) };
      } catch (error) {
        status = { problem: `${(error as Error).message} Revocation cannot be ruled out.` };
      }
      cached = { stamp, status };
    }
    return cached.status;
  };
}

/**
 * Refreshes the list at `target` from `source` (an https:// or http:// URL, or a file). The new list is
 * checked before it replaces the old one, and written beside it then renamed, so a reader never sees half
 * a file. Answers how many entries it holds.
 */
export async function refreshRevocationList(source: string, target: string): Promise<number> {
  const text = /^https?:\/\//i.test(source) ? await fetchList(source) : readFileSync(source, 'utf8');
  const entries = parseRevocationList(text);
  const temporary = `${target}.${process.pid}.tmp`;
  writeFileSync(temporary, text);
  renameSync(temporary, target);
  return entries.size;
}

async function fetchList(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(30_000) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}.`);
  return response.text();
}
