import type { WebhookEvent } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import type { TenantScope } from '../../authz/tenancy';
import type { DB } from '../../db/types';

export interface EndpointRow {
  id: number;
  url: string;
  description: string;
  events: string[];
  secret_sealed: string;
  retailer_phone: string | null;
  enabled: boolean;
  created_by: string;
  created_at: Date;
  consecutive_failures: number;
  circuit_state: CircuitState;
  circuit_until: Date | null;
}

/** An endpoint's circuit breaker (see delivery.ts): sent to, paused, or one trial under way. */
export type CircuitState = 'closed' | 'open' | 'half_open';

const ENDPOINT_COLUMNS = [
  'id',
  'url',
  'description',
  'events',
  'secret_sealed',
  'retailer_phone',
  'enabled',
  'created_by',
  'created_at',
  'consecutive_failures',
  'circuit_state',
  'circuit_until',
] as const;

const asEndpoint = (row: EndpointRow): EndpointRow => ({ ...row, id: Number(row.id) });

/** The endpoints in a scope (authz `scopeFor`): every tenant's, or one retailer's. */
export async function listEndpoints(db: Kysely<DB>, scope: TenantScope): Promise<EndpointRow[]> {
  let q = db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('deleted_at', 'is', null)
    .orderBy('id');
  if (scope.retailerPhone !== null) q = q.where('retailer_phone', '=', scope.retailerPhone);
  return (await q.execute()).map(asEndpoint);
}

export async function findEndpoint(db: Kysely<DB>, id: number): Promise<EndpointRow | undefined> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(ENDPOINT_COLUMNS)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
  return row ? asEndpoint(row) : undefined;
}

/** The endpoints of one tenant: the lender's (`retailerPhone` null) or a retailer's. */
export async function countEndpoints(db: Kysely<DB>, retailerPhone: string | null): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('deleted_at', 'is', null)
    .where('retailer_phone', retailerPhone === null ? 'is' : '=', retailerPhone)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertEndpoint(
  db: Kysely<DB>,
  values: {
    url: string;
    description: string;
    events: readonly WebhookEvent[];
    secretSealed: (id: number) => string;
    retailerPhone: string | null;
    createdBy: string;
    createdByUserId: number | null;
  },
): Promise<EndpointRow> {
  return db.transaction().execute(async (trx) => {
    // The sealed secret binds the endpoint's id (a sealed value copied to another row does not open).
    const { id } = await trx
      .insertInto('webhook_endpoints')
      .values({
        url: values.url,
        description: values.description,
        events: [...values.events],
        secret_sealed: '',
        retailer_phone: values.retailerPhone,
        created_by: values.createdBy,
        created_by_user_id: values.createdByUserId,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ secret_sealed: values.secretSealed(Number(id)) })
      .where('id', '=', id)
      .returning(ENDPOINT_COLUMNS)
      .executeTakeFirstOrThrow();
    return asEndpoint(row);
  });
}

export async function updateEndpoint(
  db: Kysely<DB>,
  id: number,
  patch: { url?: string; events?: readonly WebhookEvent[]; description?: string; enabled?: boolean },
): Promise<EndpointRow | undefined> {
  const row = await db
    .updateTable('webhook_endpoints')
    .set({
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.events !== undefined ? { events: [...patch.events] } : {}),
      ...(patch.description !== undefined ? { description: patch.description } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    })
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returning(ENDPOINT_COLUMNS)
    .executeTakeFirst();
  return row ? asEndpoint(row) : undefined;
}

/** Deletes an endpoint: it stays as history; its deliveries not yet made are given up. */
export async function deleteEndpoint(db: Kysely<DB>, id: number): Promise<boolean> {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('webhook_endpoints')
      .set({ deleted_at: sql<Date>`now()`, enabled: false })
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!row) return false;
    await trx
      .updateTable('webhook_deliveries')
      .set({ status: 'FAILED', last_error: 'endpoint deleted' })
      .where('endpoint_id', '=', id)
      .where('status', '=', 'PENDING')
      .execute();
    return true;
  });
}

/** One event, as a part of the system that caused it hands it over (see emitEvents). */
export interface EventRecord {
  type: WebhookEvent;
  /** The device the event is about (retailer scoping), if any. */
  imei1?: string | null;
  /** For events not about one device (batch.completed): the retailer it belongs to, if any. */
  retailerPhone?: string | null;
  data: Record<string, unknown>;
}

/**
 * Writes one delivery per event and subscribed, enabled endpoint, in the caller's transaction (so the
 * event exists exactly when what caused it committed). Set-based: one statement for any number of
 * events, and a cheap one when no endpoint subscribes. An endpoint with a retailer receives only the
 * events of that retailer's devices (or batches). Returns how many deliveries were written.
 */
export async function emitEvents(
  db: Kysely<DB>,
  events: readonly EventRecord[],
  giveUpAfterMs: number,
): Promise<number> {
  if (events.length === 0) return 0;
  const at = new Date().toISOString();
  const payloads = events.map((e) => JSON.stringify({ type: e.type, timestamp: at, data: e.data }));
  const result = await sql<{ n: number }>`
    WITH e AS (
      SELECT * FROM unnest(${events.map((e) => e.type)}::text[], ${events.map((e) => e.imei1 ?? null)}::text[],
                           ${events.map((e) => e.retailerPhone ?? null)}::text[], ${payloads}::text[])
        AS e(type, imei1, retailer_phone, payload)
    ), ins AS (
      INSERT INTO webhook_deliveries (endpoint_id, message_id, event, payload, give_up_at)
      SELECT w.id, 'msg_' || replace(gen_random_uuid()::text, '-', ''),
             e.type, e.payload::jsonb, now() + ${giveUpAfterMs} * interval '1 millisecond'
      FROM e
      JOIN webhook_endpoints w ON w.enabled AND w.deleted_at IS NULL AND e.type = ANY(w.events)
      LEFT JOIN devices d ON d.imei1 = e.imei1
      WHERE w.retailer_phone IS NULL OR w.retailer_phone = coalesce(d.retailer_phone, e.retailer_phone)
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM ins`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

export interface ClaimedDelivery {
  id: number;
  endpoint_id: number;
  message_id: string;
  event: string;
  payload: unknown;
  attempts: number;
  give_up_at: Date;
  url: string;
  secret_sealed: string;
  retailer_phone: string | null;
  /** Its endpoint's breaker when claimed: a success closes it only when it is not clean already. */
  consecutive_failures: number;
  circuit_state: CircuitState;
}

/** A due delivery the worker may claim (locked, not yet claimed: see lockDueDeliveries). */
export interface DueDelivery {
  id: number;
  endpoint_id: number;
  retailer_phone: string | null;
  /** Its endpoint's circuit is open and its cool-down over: this would be the endpoint's trial. */
  trial: boolean;
}

/**
 * Locks (FOR UPDATE SKIP LOCKED, for the caller's transaction) the oldest `perEndpoint` due deliveries of
 * each live endpoint not in `skip` whose circuit lets them be tried (closed, or open with its cool-down
 * over), oldest first. Another instance skips what is locked here; the caller claims some with
 * leaseDeliveries and the rest are free again when its transaction ends.
 */
export async function lockDueDeliveries(
  db: Kysely<DB>,
  perEndpoint: number,
  skip: readonly number[],
): Promise<DueDelivery[]> {
  const { rows } = await sql<DueDelivery>`
    SELECT d.id, w.id AS endpoint_id, w.retailer_phone, w.circuit_state <> 'closed' AS trial
    FROM webhook_endpoints w CROSS JOIN LATERAL (
      SELECT id, next_attempt_at FROM webhook_deliveries
      WHERE endpoint_id = w.id AND status = 'PENDING' AND next_attempt_at <= now() AND give_up_at > now()
      ORDER BY next_attempt_at, id LIMIT ${perEndpoint} FOR UPDATE SKIP LOCKED
    ) d
    WHERE w.deleted_at IS NULL AND NOT (w.id = ANY(${[...skip]}::bigint[]))
      AND (w.circuit_state = 'closed' OR w.circuit_until <= now())
    ORDER BY d.next_attempt_at, d.id`.execute(db);
  return rows.map((row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) }));
}

/**
 * Starts the trial of each of these endpoints whose circuit is open with its cool-down over (or whose
 * trial's lease ran out): half-open, leased for `leaseMs`, so no other instance starts one too. Returns
 * the endpoints whose trial this call started.
 */
export async function startTrials(
  db: Kysely<DB>,
  endpointIds: readonly number[],
  leaseMs: number,
): Promise<number[]> {
  if (endpointIds.length === 0) return [];
  const rows = await db
    .updateTable('webhook_endpoints')
    .set({
      circuit_state: 'half_open',
      circuit_until: sql<Date>`now() + ${leaseMs} * interval '1 millisecond'`,
    })
    .where('id', 'in', [...endpointIds])
    .where('circuit_state', '<>', 'closed')
    .where('circuit_until', '<=', sql<Date>`now()`)
    .returning('id')
    .execute();
  return rows.map((row) => Number(row.id));
}

/**
 * Claims deliveries for `leaseMs`: counts the attempt and moves the next one past the lease, so no other
 * instance takes them (if the sender dies, they are due again when the lease ends). With their endpoint.
 */
export async function leaseDeliveries(
  db: Kysely<DB>,
  ids: readonly number[],
  leaseMs: number,
): Promise<ClaimedDelivery[]> {
  if (ids.length === 0) return [];
  const { rows } = await sql<ClaimedDelivery>`
    WITH claimed AS (
      UPDATE webhook_deliveries SET attempts = attempts + 1,
        next_attempt_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE id = ANY(${[...ids]}::bigint[])
      RETURNING id, endpoint_id, message_id, event, payload, attempts, give_up_at
    )
    SELECT c.*, w.url, w.secret_sealed, w.retailer_phone, w.consecutive_failures, w.circuit_state
    FROM claimed c JOIN webhook_endpoints w ON w.id = c.endpoint_id
    ORDER BY c.id`.execute(db);
  return rows.map((row) => ({ ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) }));
}

/** An endpoint answered: its circuit closes (written only when it was not closed with no failures). */
export async function closeCircuit(db: Kysely<DB>, endpointId: number): Promise<void> {
  await db
    .updateTable('webhook_endpoints')
    .set({ consecutive_failures: 0, circuit_state: 'closed', circuit_until: null })
    .where('id', '=', endpointId)
    .where((eb) => eb.or([eb('consecutive_failures', '<>', 0), eb('circuit_state', '<>', 'closed')]))
    .execute();
}

/**
 * An attempt to an endpoint failed: one more consecutive failure. The circuit opens for `cooldownMs` at
 * the `threshold`-th (closed) or when its trial fails (half-open); failures of attempts still under way
 * when it opened leave it as it is. Returns whether this failure opened it.
 */
export async function recordEndpointFailure(
  db: Kysely<DB>,
  endpointId: number,
  threshold: number,
  cooldownMs: number,
): Promise<boolean> {
  const { rows } = await sql<{ was: CircuitState; state: CircuitState }>`
    WITH old AS (
      SELECT id, circuit_state AS was, circuit_state = 'half_open'
          OR (circuit_state = 'closed' AND consecutive_failures + 1 >= ${threshold}) AS opens
      FROM webhook_endpoints WHERE id = ${endpointId} FOR UPDATE
    )
    UPDATE webhook_endpoints w SET consecutive_failures = w.consecutive_failures + 1,
      circuit_state = CASE WHEN old.opens THEN 'open' ELSE w.circuit_state END,
      circuit_until = CASE WHEN old.opens THEN now() + ${cooldownMs} * interval '1 millisecond'
                           ELSE w.circuit_until END
    FROM old WHERE w.id = old.id
    RETURNING old.was, w.circuit_state AS state`.execute(db);
  const row = rows[0];
  return row !== undefined && row.was !== 'open' && row.state === 'open';
}

/** Live endpoints whose circuit is not closed (`lendlock_webhook_circuits_open`). */
export async function countOpenCircuits(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select(sql<number>`count(*)::int`.as('n'))
    .where('deleted_at', 'is', null)
    .where('circuit_state', '<>', 'closed')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function markDelivered(db: Kysely<DB>, id: number, statusCode: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'DELIVERED',
      delivered_at: sql<Date>`now()`,
      last_status_code: statusCode,
      last_error: null,
    })
    .where('id', '=', id)
    .execute();
}

/** Records a failed attempt: tried again after `delayMs`, or given up when that passes its deadline. */
export async function recordFailedAttempt(
  db: Kysely<DB>,
  id: number,
  failure: { statusCode: number | null; error: string; delayMs: number; permanent: boolean },
): Promise<'retry' | 'failed'> {
  const row = await db
    .updateTable('webhook_deliveries')
    .set({
      last_status_code: failure.statusCode,
      last_error: failure.error,
      status: sql<'PENDING' | 'FAILED'>`CASE WHEN ${failure.permanent}
        OR now() + ${failure.delayMs} * interval '1 millisecond' >= give_up_at THEN 'FAILED' ELSE 'PENDING' END`,
      next_attempt_at: sql<Date>`now() + ${failure.delayMs} * interval '1 millisecond'`,
    })
    .where('id', '=', id)
    .returning('status')
    .executeTakeFirst();
  return row?.status === 'FAILED' ? 'failed' : 'retry';
}

/** Gives up deliveries past their deadline that nobody holds (no instance ran meanwhile). */
export async function failExpiredDeliveries(db: Kysely<DB>): Promise<number> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'FAILED', last_error: sql<string>`coalesce(last_error, 'never attempted')` })
    .where('status', '=', 'PENDING')
    .where('give_up_at', '<=', sql<Date>`now()`)
    .where('next_attempt_at', '<=', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export interface DeliveryRow {
  id: number;
  message_id: string;
  event: string;
  status: 'PENDING' | 'DELIVERED' | 'FAILED';
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date;
  created_at: Date;
  delivered_at: Date | null;
  payload: unknown;
}

export async function listDeliveries(
  db: Kysely<DB>,
  endpointId: number,
  query: { status?: 'PENDING' | 'DELIVERED' | 'FAILED'; limit: number; before?: number },
): Promise<DeliveryRow[]> {
  let q = db
    .selectFrom('webhook_deliveries')
    .select([
      'id',
      'message_id',
      'event',
      'status',
      'attempts',
      'last_status_code',
      'last_error',
      'next_attempt_at',
      'created_at',
      'delivered_at',
      'payload',
    ])
    .where('endpoint_id', '=', endpointId)
    .orderBy('id', 'desc')
    .limit(query.limit);
  if (query.status) q = q.where('status', '=', query.status);
  if (query.before) q = q.where('id', '<', query.before);
  return (await q.execute()).map((row) => ({ ...row, id: Number(row.id) }));
}

/** The delivery with its endpoint's tenant (for a replay), if its endpoint is not deleted. */
export async function findDelivery(
  db: Kysely<DB>,
  id: number,
): Promise<
  | { id: number; endpoint_id: number; message_id: string; event: string; retailer_phone: string | null }
  | undefined
> {
  const row = await db
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as w', 'w.id', 'd.endpoint_id')
    .select(['d.id', 'd.endpoint_id', 'd.message_id', 'd.event', 'w.retailer_phone'])
    .where('d.id', '=', id)
    .where('w.deleted_at', 'is', null)
    .executeTakeFirst();
  return row ? { ...row, id: Number(row.id), endpoint_id: Number(row.endpoint_id) } : undefined;
}

/**
 * Queues a delivery again (a replay): due now, with a fresh deadline and the same message id, so a
 * receiver that did get it before de-duplicates.
 */
export async function requeueDelivery(db: Kysely<DB>, id: number, giveUpAfterMs: number): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({
      status: 'PENDING',
      next_attempt_at: sql<Date>`now()`,
      give_up_at: sql<Date>`now() + ${giveUpAfterMs} * interval '1 millisecond'`,
      delivered_at: null,
    })
    .where('id', '=', id)
    .execute();
}

/** The events some enabled endpoint subscribes to. */
export async function subscribedEvents(db: Kysely<DB>): Promise<Set<string>> {
  const { rows } = await sql<{ event: string }>`
    SELECT DISTINCT unnest(events) AS event FROM webhook_endpoints WHERE enabled AND deleted_at IS NULL`.execute(
    db,
  );
  return new Set(rows.map((row) => row.event));
}

/** Whether any enabled endpoint subscribes to `type` (the offline sweep runs only then). */
export async function anySubscribed(db: Kysely<DB>, type: WebhookEvent): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('enabled', '=', true)
    .where('deleted_at', 'is', null)
    .where(sql<boolean>`${type} = ANY(events)`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The enrolled devices offline for longer than `afterMs` (but less than a week more: a device gone for
 * good is not announced again) that were not yet announced for this disconnection: marks them announced
 * and writes their device.offline events, in one transaction. Two instances at once announce each once
 * (the upsert's condition: the second finds the notice already there).
 */
export async function announceOfflineDevices(
  db: Kysely<DB>,
  afterMs: number,
  limit: number,
  giveUpAfterMs: number,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    const devices = await claimOfflineDevices(trx, afterMs, limit);
    await emitEvents(
      trx,
      devices.map((d) => ({
        type: 'device.offline' as const,
        imei1: d.imei1,
        data: { imei1: d.imei1, lastSeenAt: new Date(d.last_seen_at).toISOString() },
      })),
      giveUpAfterMs,
    );
    return devices.length;
  });
}

async function claimOfflineDevices(
  db: Kysely<DB>,
  afterMs: number,
  limit: number,
): Promise<{ imei1: string; last_seen_at: Date }[]> {
  const { rows } = await sql<{ imei1: string; last_seen_at: Date }>`
    INSERT INTO webhook_offline_notices (imei1, last_seen_at)
    SELECT d.imei1, d.last_seen_at FROM devices d
    WHERE d.offline_since IS NOT NULL AND NOT d.online AND d.claimstatus = 'ENROLLED'
      AND d.offline_since < now() - ${afterMs} * interval '1 millisecond'
      AND d.offline_since > now() - ${afterMs} * interval '1 millisecond' - interval '7 days'
      AND d.last_seen_at < now() - ${afterMs} * interval '1 millisecond'
      AND NOT EXISTS (SELECT 1 FROM webhook_offline_notices n
                      WHERE n.imei1 = d.imei1 AND n.last_seen_at >= d.last_seen_at)
    ORDER BY d.offline_since LIMIT ${limit}
    ON CONFLICT (imei1) DO UPDATE SET last_seen_at = excluded.last_seen_at
      WHERE webhook_offline_notices.last_seen_at < excluded.last_seen_at
    RETURNING imei1, last_seen_at`.execute(db);
  return rows;
}
