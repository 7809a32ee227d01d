import { createHash } from 'node:crypto';
import { type AuditSearch, daysInZone } from '@lendlock/contract';
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { AuditScope } from '../../authz/resources/audit';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';

export interface AuditEntry {
  actor: Principal | { label: string } | null;
  action: string;
  target?: string | null;
  address?: string | null;
  result: string;
  details?: Record<string, unknown>;
}

/** The columns of one audit row as the writers give them (`appendAudit`, `appendAuditRows`). */
export interface AuditValues {
  actor_user_id: number | null;
  actor_key_id: number | null;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  result: string;
  /** JSON text, or null. */
  details: string | null;
}

/** The row an entry becomes: who (a principal, a label such as `cli`, or `system`), what, on what. */
export function auditValues(entry: AuditEntry): AuditValues {
  const actor = entry.actor;
  const principal = actor && 'userId' in actor ? actor : null;
  return {
    actor_user_id: principal?.userId ?? null,
    actor_key_id: principal?.keyId ?? null,
    actor: principal ? principal.email : actor && 'label' in actor ? actor.label : 'system',
    action: entry.action,
    target: entry.target ?? null,
    address: entry.address ?? null,
    result: entry.result,
    details: entry.details ? JSON.stringify(entry.details) : null,
  };
}

/**
 * Appends one row to the append-only audit log (triggers that fire ALWAYS refuse UPDATE, DELETE and
 * TRUNCATE; the application's role may only INSERT and SELECT). The sealer chains it within a second.
 */
export async function appendAudit(db: Kysely<DB>, entry: AuditEntry): Promise<void> {
  await db.insertInto('audit_log').values(auditValues(entry)).execute();
}

/** Appends many rows in one statement (set-based: one INSERT … SELECT FROM unnest). */
export async function appendAuditRows(db: Kysely<DB>, rows: readonly AuditValues[]): Promise<void> {
  if (rows.length === 0) return;
  const column = (pick: (r: AuditValues) => string | number | null) =>
    rows.map((r) => {
      const value = pick(r);
      return value === null ? null : String(value);
    });
  await appendAuditRowsFrom(
    sql`SELECT * FROM unnest(
      ${column((r) => r.actor_user_id)}::text[], ${column((r) => r.actor_key_id)}::text[],
      ${column((r) => r.actor)}::text[], ${column((r) => r.action)}::text[], ${column((r) => r.target)}::text[],
      ${column((r) => r.address)}::text[], ${column((r) => r.result)}::text[], ${column((r) => r.details)}::text[]
    ) AS v(actor_user_id, actor_key_id, actor, action, target, address, result, details)`,
  ).execute(db);
}

/**
 * The one INSERT into audit_log for a set of rows inside a larger statement (e.g. a data-modifying CTE:
 * `audited AS (${appendAuditRowsFrom(sql`SELECT … FROM v WHERE …`)})`). `select` yields, as text, the
 * columns actor_user_id, actor_key_id, actor, action, target, address, result, details (JSON text).
 */
export function appendAuditRowsFrom(select: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`INSERT INTO audit_log (actor_user_id, actor_key_id, actor, action, target, address, result, details)
    SELECT s.actor_user_id::int, s.actor_key_id::int, s.actor, s.action, s.target, s.address, s.result,
           s.details::jsonb
    FROM (${select}) AS s(actor_user_id, actor_key_id, actor, action, target, address, result, details)`;
}

/**
 * The audit log, searched by IMEI (target), user, action and date (whole days in `timeZone`, the
 * operator's), newest first in the JSON. Each filter has an index ending in `id` (migration 0018), so a
 * page is an index range read backwards.
 */
/** The most rows a search counts: past it the answer is "more than AUDIT_COUNT_CAP". */
export const AUDIT_COUNT_CAP = 10_000;

/** The rows of a search: counted, paged (JSON) and read by key (export); formatted by the service. */
export interface AuditRows {
  count(): Promise<number>;
  /** Rows after `offset` (JSON paging). */
  page(offset: number, limit: number): Promise<AuditRowValues[]>;
  /** Rows with key > `after`, by key (export). Returns the rows and the last key. */
  after(after: number, limit: number): Promise<{ rows: AuditRowValues[]; last: number | null }>;
  /** How many rows match, counting no further than `cap` (`capped`: more match). */
  countUpTo(cap: number): Promise<{ total: number; capped: boolean }>;
}

/** One row of a search, its `_key` the row's id. */
export type AuditRowValues = {
  _key: number;
  id: number;
  at: string;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  result: string;
  details: string | null;
};

export function auditSource(
  db: Kysely<DB>,
  search: AuditSearch,
  timeZone: string,
  /** authz/resources/audit.ts: all (null), or one retailer's devices' rows and one user's actions. */
  scope: AuditScope,
): AuditRows {
  const from = search.from ? daysInZone(search.from, search.from, timeZone).start : null;
  const to = search.to ? daysInZone(search.to, search.to, timeZone).end : null;
  const query = () => {
    let q = db
      .selectFrom('audit_log')
      .select(['id', 'id as _key', 'at', 'actor', 'action', 'target', 'address', 'result', 'details']);
    if (scope) {
      // Rows name a device by either IMEI (a command by imei1, a refused registration by what it sent).
      const theirs = (column: 'imei1' | 'imei2') =>
        db.selectFrom('devices').select(column).where('retailer_phone', '=', scope.retailerPhone);
      q = q.where((eb) =>
        eb.or([
          eb('target', 'in', theirs('imei1')),
          eb('target', 'in', theirs('imei2')),
          eb('actor_user_id', '=', scope.userId),
        ]),
      );
    }
    if (search.imei) q = q.where('target', '=', search.imei);
    if (search.user) q = q.where(sql`lower(actor)`, '=', search.user.toLowerCase());
    if (search.action) q = q.where('action', 'like', `${search.action.replace(/[%_\\]/g, '')}%`);
    if (from) q = q.where('at', '>=', from);
    if (to) q = q.where('at', '<', to);
    return q;
  };
  const map = (row: Record<string, unknown>): AuditRowValues => ({
    _key: Number(row._key),
    id: Number(row.id),
    at: new Date(row.at as string).toISOString(),
    actor: String(row.actor),
    action: String(row.action),
    target: (row.target as string | null) ?? null,
    address: (row.address as string | null) ?? null,
    result: String(row.result),
    details: row.details === null || row.details === undefined ? null : JSON.stringify(row.details),
  });
  return {
    async count() {
      const row = await query()
        .clearSelect()
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    },
    async page(offset, limit) {
      return (await query().orderBy('id', 'desc').offset(offset).limit(limit).execute()).map(map);
    },
    async countUpTo(cap) {
      // Counts at most cap + 1 matching rows (an index range, never the whole table).
      const row = await db
        .selectFrom(
          query()
            .clearSelect()
            .select('id')
            .limit(cap + 1)
            .as('m'),
        )
        .select(sql<number>`count(*)::int`.as('n'))
        .executeTakeFirstOrThrow();
      const n = Number(row.n);
      return n > cap ? { total: cap, capped: true } : { total: n, capped: false };
    },
    async after(after, limit) {
      const rows = (await query().where('id', '>', after).orderBy('id').limit(limit).execute()).map(map);
      return { rows, last: rows.at(-1)?._key ?? null };
    },
  };
}

/*
 * The hash chain (docs/adr/0009-audit-hash-chain.md). `audit_chain` row `seq` names one audit row and
 * carries sha256(hash of row seq - 1 | the audit row's content), the first one chained to GENESIS. The
 * content is one JSON array built by PostgreSQL from every column (the time as microseconds since the
 * epoch), so the sealer and the verifier read the same text whatever the session's time zone.
 */
export const AUDIT_CHAIN_GENESIS = 'lendlock-audit-chain-v1';

const auditContent = sql<string>`json_build_array(a.id, (extract(epoch FROM a.at) * 1000000)::bigint,
  a.actor_user_id, a.actor_key_id, a.actor, a.action, a.target, a.address, a.result, a.details)::text`;

/** The link after `previous` for an audit row whose content is `content`. */
export function chainHash(previous: string, content: string): string {
  return createHash('sha256').update(previous).update('|').update(content).digest('hex');
}

/** Transaction-scoped advisory lock key of the sealer: one instance seals at a time (its lease). */
const SEALER_LOCK = 7466018;

/**
 * Looks at the next `limit` audit rows by id after `after` and seals those not sealed yet, in id order,
 * under the sealer's lease (an advisory lock held for the transaction; another instance sealing
 * meanwhile makes this a no-op). `after: null` starts `lookback` ids before the newest sealed row (a
 * transaction that commits late leaves a lower id behind), or at the start of the log when `lookback`
 * is null. Each call reads a bounded id range (a primary-key range and one probe of the chain's index
 * per row), whatever the size of the log. Returns how many rows it sealed, how many ids it looked at
 * and the last one (where the next call goes on).
 */
export async function sealAuditRows(
  db: Kysely<DB>,
  options: { limit: number; after: number | null; lookback: number | null },
): Promise<{ sealed: number; scanned: number; last: number | null }> {
  return db.transaction().execute(async (trx) => {
    const lease = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${SEALER_LOCK}) AS ok`.execute(
      trx,
    );
    if (!lease.rows[0]?.ok) return { sealed: 0, scanned: 0, last: null };
    let floor = options.after ?? 0;
    if (options.after === null && options.lookback !== null) {
      const newest = await trx
        .selectFrom('audit_chain')
        .select(sql<number | null>`max(audit_id)`.as('id'))
        .executeTakeFirst();
      floor = Math.max(0, Number(newest?.id ?? 0) - options.lookback);
    }
    const rows = await sql<{ id: number; sealed: boolean; content: string | null }>`
      SELECT a.id, c.audit_id IS NOT NULL AS sealed,
             CASE WHEN c.audit_id IS NULL THEN ${auditContent} END AS content
      FROM (SELECT * FROM audit_log WHERE id > ${floor} ORDER BY id LIMIT ${options.limit}) a
      LEFT JOIN audit_chain c ON c.audit_id = a.id
      ORDER BY a.id`.execute(trx);
    const scanned = rows.rows.length;
    const last = scanned > 0 ? Number(rows.rows[scanned - 1]?.id) : null;
    const unsealed = rows.rows.filter((row) => !row.sealed && row.content !== null);
    if (unsealed.length === 0) return { sealed: 0, scanned, last };
    const head = await trx
      .selectFrom('audit_chain')
      .select(['seq', 'hash'])
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    let seq = Number(head?.seq ?? 0);
    let previous = head?.hash ?? AUDIT_CHAIN_GENESIS;
    const seqs: string[] = [];
    const ids: string[] = [];
    const hashes: string[] = [];
    for (const row of unsealed) {
      seq += 1;
      previous = chainHash(previous, row.content as string);
      seqs.push(String(seq));
      ids.push(String(row.id));
      hashes.push(previous);
    }
    await sql`INSERT INTO audit_chain (seq, audit_id, hash)
      SELECT * FROM unnest(${seqs}::bigint[], ${ids}::bigint[], ${hashes}::text[])`.execute(trx);
    return { sealed: unsealed.length, scanned, last };
  });
}

export interface ChainVerification {
  /** null when every sealed row matches its link. */
  broken: { auditId: number | null; seq: number; reason: string } | null;
  sealed: number;
  unsealed: number;
  /** The lowest audit row id not sealed yet, if any. */
  firstUnsealed: number | null;
  /** The last link's hash (record it elsewhere to detect a rewrite of the whole chain). */
  head: string | null;
}

/**
 * Recomputes the chain from the first link, `pageSize` links at a time, and stops at the first link
 * that does not match: an audit row changed (its content), removed (missing), or a link removed (a gap
 * in `seq`) or changed. Then counts the rows not sealed yet.
 */
export async function verifyAuditChain(db: Kysely<DB>, pageSize = 10_000): Promise<ChainVerification> {
  let previous = AUDIT_CHAIN_GENESIS;
  let expectedSeq = 1;
  let sealed = 0;
  let broken: ChainVerification['broken'] = null;
  for (;;) {
    const page = await sql<{ seq: number; audit_id: number; hash: string; content: string | null }>`
      SELECT c.seq, c.audit_id, c.hash, CASE WHEN a.id IS NULL THEN NULL ELSE ${auditContent} END AS content
      FROM audit_chain c LEFT JOIN audit_log a ON a.id = c.audit_id
      WHERE c.seq >= ${expectedSeq} ORDER BY c.seq LIMIT ${pageSize}`.execute(db);
    for (const link of page.rows) {
      const seq = Number(link.seq);
      const auditId = Number(link.audit_id);
      if (seq !== expectedSeq) {
        broken = { auditId, seq, reason: `link ${expectedSeq} is missing` };
      } else if (link.content === null) {
        broken = { auditId, seq, reason: 'the audit row is missing' };
      } else if (chainHash(previous, link.content) !== link.hash) {
        broken = { auditId, seq, reason: 'the audit row or its link was changed' };
      }
      if (broken) break;
      previous = link.hash;
      expectedSeq += 1;
      sealed += 1;
    }
    if (broken || page.rows.length < pageSize) break;
  }
  const unsealed = await sql<{ n: number; first: number | null }>`
    SELECT count(*)::int AS n, min(a.id) AS first FROM audit_log a
    WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = a.id)`.execute(db);
  const first = unsealed.rows[0]?.first;
  return {
    broken,
    sealed,
    unsealed: Number(unsealed.rows[0]?.n ?? 0),
    firstUnsealed: first === null || first === undefined ? null : Number(first),
    head: sealed > 0 ? previous : null,
  };
}

/** The highest audit row id so far (one probe of the primary key), or 0. */
export async function newestAuditId(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('audit_log')
    .select(sql<number | null>`max(id)`.as('id'))
    .executeTakeFirst();
  return Number(row?.id ?? 0);
}

/** The lowest audit row id not sealed yet, or null (one anti-join over the log and the chain). */
export async function firstUnsealedAuditId(db: Kysely<DB>): Promise<number | null> {
  const row = await sql<{ id: number | null }>`
    SELECT min(a.id) AS id FROM audit_log a
    WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.audit_id = a.id)`.execute(db);
  const id = row.rows[0]?.id;
  return id === null || id === undefined ? null : Number(id);
}

/** The chain's last link (its seq and hash), or null while nothing is sealed. */
export async function chainHead(db: Kysely<DB>): Promise<{ seq: number; hash: string } | null> {
  const row = await db
    .selectFrom('audit_chain')
    .select(['seq', 'hash'])
    .orderBy('seq', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row ? { seq: Number(row.seq), hash: row.hash } : null;
}

/** Keeps an anchor of the chain's head; the same head anchored twice (two instances) is kept once. */
export async function insertAnchor(
  db: Kysely<DB>,
  anchor: { seq: number; hash: string; mac: string },
): Promise<void> {
  await db
    .insertInto('audit_anchors')
    .values(anchor)
    .onConflict((oc) => oc.column('seq').doNothing())
    .execute();
}

export interface AnchorBeside {
  seq: number;
  hash: string;
  mac: string;
  /** The chain's link at the anchor's seq now, or null when it is gone. */
  link: string | null;
}

/** Kept anchors after `afterSeq`, `limit` of them in seq order, each with the chain's link at its seq. */
export async function anchorsBesideChain(
  db: Kysely<DB>,
  afterSeq: number,
  limit: number,
): Promise<AnchorBeside[]> {
  const rows = await db
    .selectFrom('audit_anchors as a')
    .leftJoin('audit_chain as c', 'c.seq', 'a.seq')
    .select(['a.seq', 'a.hash', 'a.mac', 'c.hash as link'])
    .where('a.seq', '>', afterSeq)
    .orderBy('a.seq')
    .limit(limit)
    .execute();
  return rows.map((row) => ({ seq: Number(row.seq), hash: row.hash, mac: row.mac, link: row.link ?? null }));
}

/** The chain's link hashes at these seqs (those still there). */
export async function chainLinks(db: Kysely<DB>, seqs: readonly number[]): Promise<Map<number, string>> {
  if (seqs.length === 0) return new Map();
  const rows = await db.selectFrom('audit_chain').select(['seq', 'hash']).where('seq', 'in', seqs).execute();
  return new Map(rows.map((row) => [Number(row.seq), row.hash]));
}
