/**
 * Anchors of the audit chain (docs/adr/0009-audit-hash-chain.md § Anchors). The chain alone shows a
 * changed row, but its owner can delete the newest rows with their links, or rewrite every link after a
 * changed row, and the chain still verifies. An anchor is the chain's head as it stood — its last link's
 * seq and hash — with an HMAC-SHA256 under AUDIT_ANCHOR_KEY, a key the database does not hold. The
 * sealer publishes one whenever the head moved and AUDIT_ANCHOR_INTERVAL has passed: a log line (for a
 * log shipper to keep), two metrics, and a row in `audit_anchors`. `audit verify` checks each anchor it
 * has — the kept rows and any given with `--anchor` — against the chain now:
 * - its MAC must be genuine (an anchor written without the key is refused);
 * - the link at its seq must still exist (a deleted tail leaves it missing);
 * - and carry the anchored hash (a rewritten chain carries another).
 * Rows deleted after the newest anchor published outside are not detectable: the window is the interval.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DB } from '../../db/types';
import { type KeyLocation, loadKey } from '../../lib/secrets-at-rest';
import { type AnchorBeside, anchorsBesideChain, chainHead, chainLinks, insertAnchor } from './repository';

/** The anchor's format and the MAC's domain: a MAC made for anything else never matches. */
export const ANCHOR_VERSION = 'lendlock-anchor-v1';

/** Where the anchor key lives when AUDIT_ANCHOR_KEY is unset. */
export const ANCHOR_KEY_FILE = 'audit-anchor.key';

export interface AuditAnchor {
  seq: number;
  hash: string;
  mac: string;
}

const anchorKeyAt = (configured: string | undefined, dataDir: string, create: boolean): KeyLocation => ({
  configured,
  name: 'AUDIT_ANCHOR_KEY',
  dataDir,
  fileName: ANCHOR_KEY_FILE,
  create,
});

/** The server's anchor key: AUDIT_ANCHOR_KEY, else DATA_DIR/audit-anchor.key, created on first use. */
export function anchorKey(configured: string | undefined, dataDir: string): Buffer {
  const found = loadKey(anchorKeyAt(configured, dataDir, true));
  if (!found) throw new Error(`no anchor key in ${dataDir}`);
  return found.key;
}

/** The anchor key for checking only (the CLI): null when neither the variable nor the file exists. */
export function existingAnchorKey(configured: string | undefined, dataDir: string): Buffer | null {
  return loadKey(anchorKeyAt(configured, dataDir, false))?.key ?? null;
}

export function anchorMac(key: Buffer, seq: number, hash: string): string {
  return createHmac('sha256', key).update(`${ANCHOR_VERSION}\n${seq}\n${hash}`).digest('hex');
}

export function makeAnchor(key: Buffer, head: { seq: number; hash: string }): AuditAnchor {
  return { seq: head.seq, hash: head.hash, mac: anchorMac(key, head.seq, head.hash) };
}

/** One line to copy: `lendlock-anchor-v1:<seq>:<hash>:<mac>`. */
export function formatAnchor(anchor: AuditAnchor): string {
  return `${ANCHOR_VERSION}:${anchor.seq}:${anchor.hash}:${anchor.mac}`;
}

/** The anchor a line holds, or null when it is not one. */
export function parseAnchor(text: string): AuditAnchor | null {
  const match = /^lendlock-anchor-v1:([1-9]\d{0,17}):([0-9a-f]{64}):([0-9a-f]{64})$/.exec(text.trim());
  if (!match) return null;
  return { seq: Number(match[1]), hash: match[2] ?? '', mac: match[3] ?? '' };
}

export function isGenuine(key: Buffer, anchor: AuditAnchor): boolean {
  const expected = Buffer.from(anchorMac(key, anchor.seq, anchor.hash), 'hex');
  const given = Buffer.from(anchor.mac, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Anchors the chain's head when it is not `last` (the head this instance anchored before): keeps the
 * anchor (once, whichever instance comes first) and returns it; null when the head did not move.
 */
export async function anchorHead(
  db: Kysely<DB>,
  key: Buffer,
  last: AuditAnchor | null,
): Promise<AuditAnchor | null> {
  const head = await chainHead(db);
  if (!head || (last && head.seq === last.seq && head.hash === last.hash)) return null;
  const anchor = makeAnchor(key, head);
  await insertAnchor(db, anchor);
  return anchor;
}

export interface AnchorProblem {
  anchor: string;
  /** Where it came from: `kept` (audit_anchors) or `given` (--anchor). */
  from: 'kept' | 'given';
  reason: string;
}

export interface AnchorVerification {
  /** Anchors that hold. */
  checked: number;
  problems: AnchorProblem[];
  /** The newest anchor that holds, as a line. */
  newest: string | null;
}

/** What is wrong with one anchor beside the chain's link at its seq now (null: it holds). */
function problemOf(
  key: Buffer,
  anchor: AuditAnchor,
  link: string | null,
  chainLength: number,
): string | null {
  if (!isGenuine(key, anchor)) return 'its MAC is not genuine (written without the anchor key)';
  if (link === null)
    return `link ${anchor.seq} is gone: the chain ends at link ${chainLength} (rows deleted)`;
  if (link !== anchor.hash)
    return `link ${anchor.seq} no longer carries the anchored hash (the chain was rewritten)`;
  return null;
}

/**
 * Checks every kept anchor (`pageSize` at a time) and every given one against the chain as it is now.
 * `chainLength` is the number of links the chain verification walked.
 */
export async function verifyAnchors(
  db: Kysely<DB>,
  key: Buffer,
  given: readonly AuditAnchor[],
  chainLength: number,
  pageSize = 10_000,
): Promise<AnchorVerification> {
  const problems: AnchorProblem[] = [];
  let checked = 0;
  let newest: AuditAnchor | null = null;
  const judge = (anchor: AuditAnchor, link: string | null, from: AnchorProblem['from']) => {
    const reason = problemOf(key, anchor, link, chainLength);
    if (reason) problems.push({ anchor: formatAnchor(anchor), from, reason });
    else {
      checked += 1;
      if (!newest || anchor.seq > newest.seq) newest = anchor;
    }
  };
  let after = 0;
  for (;;) {
    const page: AnchorBeside[] = await anchorsBesideChain(db, after, pageSize);
    for (const row of page) judge(row, row.link, 'kept');
    if (page.length < pageSize) break;
    after = page.at(-1)?.seq ?? after;
  }
  const links = await chainLinks(
    db,
    given.map((anchor) => anchor.seq),
  );
  for (const anchor of given) judge(anchor, links.get(anchor.seq) ?? null, 'given');
  return { checked, problems, newest: newest ? formatAnchor(newest) : null };
}
