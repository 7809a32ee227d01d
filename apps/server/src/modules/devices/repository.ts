import { type DeviceState, INITIAL_DEVICE_STATE } from '@lendlock/contract';
import {
  type Insertable,
  type InsertObject,
  type Kysely,
  type RawBuilder,
  sql,
  type Transaction,
  type UpdateObject,
} from 'kysely';
import type { TenantScope } from '../../authz/tenancy';
import { precompiled } from '../../db/precompiled';
import type { DB, DesiredCause, DeviceRow, RegistrationStatus } from '../../db/types';

/** What `toRegistrationRow` reads: a registration joined with its device (`leftJoin('devices', …)`). */
export const REGISTRATION_COLUMNS = [
  'registrations.imei1',
  'registrations.imei2',
  'registrations.match_status',
  'registrations.registration_status',
  'registrations.manufacturer',
  'registrations.brand',
  'registrations.model',
  'registrations.created_at',
  'devices.last_command',
] as const;

type Db = Kysely<DB> | Transaction<DB>;

/** A device by either of its IMEIs. */
export async function findDevice(db: Db, imei: string): Promise<DeviceRow | undefined> {
  return db
    .selectFrom('devices')
    .selectAll()
    .where((eb) => eb.or([eb('imei1', '=', imei), eb('imei2', '=', imei)]))
    .orderBy(sql`imei1 = ${imei}`, 'desc')
    .limit(1)
    .executeTakeFirst();
}

/** The columns the rules of a command read (commands/issue.ts): a set of devices is locked with these. */
const LOCKED_COLUMNS = [
  'imei1',
  'imei2',
  'online',
  'claimstatus',
  'retailer_phone',
  'desired_state',
] as const;
export type LockedDevice = Pick<DeviceRow, (typeof LOCKED_COLUMNS)[number]>;

/**
 * The one way to lock devices: the devices among `imeis`, locked for the rest of the transaction (their
 * latest version), always in imei1 order, the order every writer of several devices takes them in (no
 * deadlock between a batch chunk, a group of single commands and the device inbox). By imei1, or with
 * `byImei2` by either IMEI. With `skipLocked`, devices another transaction holds are left out instead of
 * waited for (see commands/issue.ts: a group of single commands).
 */
function lockQuery(
  trx: Transaction<DB>,
  imeis: readonly string[],
  options: { byImei2?: boolean; skipLocked?: boolean },
) {
  const list = [...new Set(imeis)];
  const query = trx
    .selectFrom('devices')
    .where((eb) =>
      options.byImei2
        ? eb.or([
            eb('imei1', '=', sql<string>`ANY(${list}::text[])`),
            eb('imei2', '=', sql<string>`ANY(${list}::text[])`),
          ])
        : eb('imei1', '=', sql<string>`ANY(${list}::text[])`),
    )
    .orderBy('imei1')
    .forUpdate();
  return options.skipLocked ? query.skipLocked() : query;
}

/**
 * Locks a set of devices (lockQuery) and returns the columns a command's rules read, only those: parsing
 * every column of hundreds of rows (keys, states, dates) cost a batch a tenth of the server's CPU
 * (bench/batch.ts).
 */
export async function lockDevices(
  trx: Transaction<DB>,
  imeis: readonly string[],
  options: { byImei2?: boolean; skipLocked?: boolean } = {},
): Promise<LockedDevice[]> {
  if (imeis.length === 0) return [];
  return lockQuery(trx, imeis, options).select(LOCKED_COLUMNS).execute();
}

/** `now()`, for a timestamp column set by the database. */
export const NOW = sql<Date>`now()`;

/**
 * A registration's lock: an advisory lock on the IMEI (it serialises registrations of a device that
 * does not exist yet too), then the device's row if there is one (see lockDevices).
 */
export async function lockForRegistration(
  trx: Transaction<DB>,
  imei1: string,
): Promise<DeviceRow | undefined> {
  await sql`SELECT pg_advisory_xact_lock(hashtext(${imei1}))`.execute(trx);
  return lockDevice(trx, imei1);
}

/**
 * Writes a registration: the device row (new, or enrolled again: `fields` over it, online false, its
 * reported state unknown, a released phone's desired state reset, a de-enrolled one's re-registration
 * recorded) and the registration record.
 */
export async function writeRegistration(
  trx: Transaction<DB>,
  registration: {
    imei1: string;
    imei2: string | null;
    existing: Pick<DeviceRow, 'claimstatus'> | undefined;
    fields: Omit<InsertObject<DB, 'devices'>, 'imei1'>;
    profile: Omit<Insertable<DB['registrations']>, 'imei1' | 'match_status' | 'registration_status'>;
    match: 'YES' | 'NO';
    registrationstatus: RegistrationStatus;
  },
): Promise<void> {
  const { imei1, imei2, existing, fields } = registration;
  if (!existing) {
    await trx
      .insertInto('devices')
      .values({ imei1, ...fields })
      .execute();
  } else {
    await trx
      .updateTable('devices')
      .set({
        ...(fields as UpdateObject<DB, 'devices'>),
        claimstatus: 'ENROLLED',
        registrationstatus: registration.registrationstatus,
        registered_at: NOW,
        online: false,
        offline_since: sql<Date>`coalesce(offline_since, now())`,
        // The agent that registers has not said what it enforces yet (a formatted phone enforces nothing
        // of what it last reported): unknown until its state arrives.
        reported_state: null,
        // A released phone registering again starts a new financing: nothing carries over. Otherwise the
        // desired state stays, and who decided it (a formatted phone collections locked is locked again
        // once its agent is back, and that lock is still collections').
        ...(existing.claimstatus === 'RELEASED'
          ? { desired_state: JSON.stringify(INITIAL_DEVICE_STATE), desired_cause: '{}' }
          : {}),
      })
      .where('imei1', '=', imei1)
      .execute();
    if (existing.claimstatus === 'DEENROLLED') {
      await trx.insertInto('deenrollments').values({ imei1, imei2, action: 'RE-REGISTERED' }).execute();
    }
  }
  await trx
    .insertInto('registrations')
    .values({
      imei1,
      ...registration.profile,
      match_status: registration.match,
      registration_status: registration.registrationstatus,
    })
    .execute();
}

/** One device by imei1, locked (see lockDevices). */
export async function lockDevice(trx: Transaction<DB>, imei1: string): Promise<DeviceRow | undefined> {
  return lockQuery(trx, [imei1], {}).selectAll().executeTakeFirst();
}

/**
 * The server de-enrolls a device (FORMATTEDDEVICE: the phone was formatted, its agent is gone): its
 * credential goes, the de-enrollment is recorded, and its open commands (QUEUED, SENT, DELIVERED) are
 * settled as CANCELLED with the reason, so nothing stays pending for a device that will never answer.
 */
/** De-enrolls a device and settles its open commands; returns the commands it cancelled. */
export async function deenrollDevice(trx: Transaction<DB>, device: Pick<DeviceRow, 'imei1' | 'imei2'>) {
  await trx
    .updateTable('devices')
    .set({
      claimstatus: 'DEENROLLED',
      credential_hash: null,
      online: false,
      offline_since: sql<Date>`coalesce(offline_since, now())`,
    })
    .where('imei1', '=', device.imei1)
    .execute();
  await trx
    .insertInto('deenrollments')
    .values({ imei1: device.imei1, imei2: device.imei2, action: 'DEENROLLED' })
    .execute();
  return trx
    .updateTable('commands')
    .set({
      status: 'CANCELLED',
      result: DEENROLLED_RESULT,
      completed_at: sql<Date>`now()`,
    })
    .where('imei1', '=', device.imei1)
    .where('status', 'in', ['QUEUED', 'SENT', 'DELIVERED'])
    .returning(['transaction_id', 'imei1', 'command', 'status', 'interface', 'batch_id', 'result'])
    .execute();
}

/** The result of the commands a de-enrollment settles. */
export const DEENROLLED_RESULT = 'device de-enrolled';

/** A released device: its claim status, and the release recorded (an executed RELEASE's consequence). */
export async function markReleased(
  trx: Transaction<DB>,
  release: { imei1: string; releasedBy: string; transactionId: string },
): Promise<{ imei2: string | null }> {
  const device = await trx
    .updateTable('devices')
    .set({ claimstatus: 'RELEASED' })
    .where('imei1', '=', release.imei1)
    .returning('imei2')
    .executeTakeFirst();
  await trx
    .insertInto('releases')
    .values({
      imei1: release.imei1,
      imei2: device?.imei2 ?? null,
      released_by: release.releasedBy,
      transaction_id: release.transactionId,
    })
    .execute();
  return { imei2: device?.imei2 ?? null };
}

/**
 * What recording commands does to their devices, inside a larger statement (commands/repository.ts
 * `recordCommands`: `device AS (${recordOnDevicesFrom(sql`SELECT … FROM v`)})`): each device takes its
 * command's `patch` into its desired state (and, for a command that decides it, who decided each key: its
 * cause, now), and its last command. `select` yields, as text, imei1, command, patch (JSON or null),
 * decides (boolean) and cause, one row per device.
 */
export function recordOnDevicesFrom(select: RawBuilder<unknown>): RawBuilder<unknown> {
  return sql`UPDATE devices d SET desired_state = d.desired_state || coalesce(s.patch::jsonb, '{}'::jsonb),
        desired_cause = CASE WHEN s.patch IS NULL OR NOT s.decides::boolean THEN d.desired_cause
          ELSE d.desired_cause || (SELECT jsonb_object_agg(k, jsonb_build_object('cause', s.cause, 'at', now()))
                                   FROM jsonb_object_keys(s.patch::jsonb) k) END,
        last_command = s.command, last_command_at = now()
      FROM (${select}) AS s(imei1, command, patch, decides, cause) WHERE d.imei1 = s.imei1`;
}

/** Online or offline, for many devices (the last word per device wins). */
export async function setOnlineMany(db: Db, entries: ReadonlyMap<string, boolean>): Promise<void> {
  if (entries.size === 0) return;
  await sql`
    UPDATE devices d SET online = v.online, last_seen_at = now(),
      offline_since = CASE WHEN v.online THEN NULL ELSE coalesce(d.offline_since, now()) END
    FROM unnest(${[...entries.keys()]}::text[], ${[...entries.values()]}::boolean[]) AS v(imei, online)
    WHERE d.imei1 = v.imei`.execute(db);
}

export interface ReportedEntry {
  state: DeviceState | null;
  appversion: string | null;
}

/**
 * What many devices report they enforce (and their app version when they said it). Returns the enrolled
 * devices among `reconcile` whose report differs from what the server wants of them (`initial` filling
 * the parts of the desired state never set).
 */
export async function setReportedStates(
  db: Db,
  entries: ReadonlyMap<string, ReportedEntry>,
  reconcile: ReadonlySet<string>,
  initial: DeviceState,
): Promise<
  Pick<DeviceRow, 'imei1' | 'claimstatus' | 'desired_state' | 'desired_cause' | 'reported_state'>[]
> {
  if (entries.size === 0) return [];
  const imeis = [...entries.keys()];
  const values = [...entries.values()];
  const result = await sql<
    Pick<DeviceRow, 'imei1' | 'claimstatus' | 'desired_state' | 'desired_cause' | 'reported_state'>
  >`
    WITH reported AS (
      UPDATE devices d SET reported_state = coalesce(v.state::jsonb, d.reported_state), last_seen_at = now(),
        appversion = coalesce(nullif(v.appversion, ''), d.appversion)
      FROM unnest(${imeis}::text[], ${values.map((v) => (v.state ? JSON.stringify(v.state) : null))}::text[],
                  ${values.map((v) => v.appversion)}::text[], ${imeis.map((imei) => reconcile.has(imei))}::boolean[])
        AS v(imei, state, appversion, reconcile)
      WHERE d.imei1 = v.imei
      RETURNING d.imei1, d.claimstatus, d.desired_state, d.desired_cause, d.reported_state, v.reconcile
    )
    SELECT imei1, claimstatus, desired_state, desired_cause, reported_state FROM reported
    WHERE reconcile AND claimstatus = 'ENROLLED'
      AND NOT (reported_state @> (${JSON.stringify(initial)}::jsonb || desired_state))`.execute(db);
  return result.rows;
}

/** Sets one key of a device's desired state, and who decided it (null: no one, the initial value). */
export async function setDesiredKey(
  db: Db,
  imei1: string,
  key: keyof DeviceState,
  value: unknown,
  decided: { cause: DesiredCause; at: Date } | null,
) {
  const cause = decided
    ? sql`desired_cause || jsonb_build_object(${key}::text, jsonb_build_object('cause', ${decided.cause}::text, 'at', ${decided.at.toISOString()}::timestamptz))`
    : sql`desired_cause - ${key}::text`;
  await sql`UPDATE devices SET desired_state = coalesce(desired_state, '{}'::jsonb) || jsonb_build_object(${key}::text, ${JSON.stringify(value)}::jsonb),
    desired_cause = ${cause}
    WHERE imei1 = ${imei1}`.execute(db);
}

export async function isFinanced(db: Db, imeis: string[]): Promise<boolean> {
  const row = await db
    .selectFrom('financed_imeis')
    .select('imei')
    .where('imei', 'in', imeis)
    .executeTakeFirst();
  return row !== undefined;
}

export async function importFinanced(db: Db, imeis: string[], source: string): Promise<number> {
  let added = 0;
  for (let i = 0; i < imeis.length; i += 1000) {
    const chunk = imeis.slice(i, i + 1000);
    const result = await db
      .insertInto('financed_imeis')
      .values(chunk.map((imei) => ({ imei, source })))
      .onConflict((oc) => oc.column('imei').doNothing())
      .executeTakeFirst();
    added += Number(result.numInsertedOrUpdatedRows ?? 0);
  }
  // Devices already registered now match.
  await db
    .updateTable('devices')
    .set({ match_status: 'YES' })
    .where('match_status', '=', 'NO')
    .where((eb) => eb.or([eb('imei1', 'in', imeis), eb('imei2', 'in', imeis)]))
    .execute();
  return added;
}

/** How many devices hold a broker credential (may be connected): the server sizes their announcements by it. */
export async function credentialedDeviceCount(db: Db): Promise<number> {
  const row = await db
    .selectFrom('devices')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('credential_hash', 'is not', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function deviceCredentialHash(db: Db, imei1: string): Promise<string | null> {
  const row = await db
    .selectFrom('devices')
    .select('credential_hash')
    .where('imei1', '=', imei1)
    .where('claimstatus', '!=', 'DEENROLLED')
    .executeTakeFirst();
  return row?.credential_hash ?? null;
}

// ---- Device identity (migration 0010): nonces, re-registration requests, the IMEIs a device holds ----

/** Keeps a registration nonce (as its SHA-256) for `imei1` until `ttlMs` from now; drops expired ones. */
export async function insertNonce(db: Db, nonceHash: string, imei1: string, ttlMs: number): Promise<Date> {
  await db.deleteFrom('device_nonces').where('expires_at', '<', sql<Date>`now()`).execute();
  const row = await db
    .insertInto('device_nonces')
    .values({
      nonce_hash: nonceHash,
      imei1,
      expires_at: sql<Date>`now() + ${ttlMs} * interval '1 millisecond'`,
    })
    .returning('expires_at')
    .executeTakeFirstOrThrow();
  return new Date(row.expires_at);
}

/** Uses up a nonce: true when it was issued for `imei1` and has not expired. A nonce works once. */
export async function consumeNonce(db: Db, nonceHash: string, imei1: string): Promise<boolean> {
  const row = await db
    .deleteFrom('device_nonces')
    .where('nonce_hash', '=', nonceHash)
    .returning(['imei1', sql<boolean>`expires_at > now()`.as('fresh')])
    .executeTakeFirst();
  return row !== undefined && row.imei1 === imei1 && row.fresh;
}

/** The devices other than `imei1` that hold any of `imeis` (in either slot). */
export async function otherHolders(db: Db, imei1: string, imeis: string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('device_imeis')
    .select(['imei', 'device'])
    .where('imei', 'in', imeis)
    .where('device', '<>', imei1)
    .execute();
  return rows.map((r) => r.imei);
}

/**
 * Uses up an operator's approval of a registration of `imei1`: the newest approved request still within
 * its window, whose claimed key (if it named one) is `publicKey`. Returns its id, or null.
 */
export async function useApproval(
  trx: Transaction<DB>,
  imei1: string,
  publicKey: string | null,
): Promise<number | null> {
  const row = await trx
    .updateTable('reregistration_requests')
    .set({ status: 'USED', used_at: sql<Date>`now()` })
    .where(
      'id',
      '=',
      trx
        .selectFrom('reregistration_requests')
        .select('id')
        .where('imei1', '=', imei1)
        .where('status', '=', 'APPROVED')
        .where('approved_until', '>', sql<Date>`now()`)
        .where((eb) => eb.or([eb('public_key', 'is', null), eb('public_key', '=', publicKey)]))
        .orderBy('id', 'desc')
        .limit(1)
        .forUpdate(),
    )
    .returning('id')
    .executeTakeFirst();
  return row ? Number(row.id) : null;
}

/**
 * Keeps a refused registration for an operator: a new request, or, when the same address claimed the
 * same key and profile before and it is still pending, one more attempt on that request.
 */
export async function recordReregistrationRequest(
  db: Db,
  request: { imei1: string; address: string; profile: Record<string, unknown>; publicKey: string | null },
): Promise<number> {
  const profile = JSON.stringify(request.profile);
  const again = await db
    .updateTable('reregistration_requests')
    .set((eb) => ({
      attempts: eb('attempts', '+', 1),
      last_attempt_at: sql<Date>`now()`,
    }))
    .where('imei1', '=', request.imei1)
    .where('status', '=', 'PENDING')
    .where('address', '=', request.address)
    .where(sql<boolean>`public_key IS NOT DISTINCT FROM ${request.publicKey}`)
    .where(sql<boolean>`profile = ${profile}::jsonb`)
    .returning('id')
    .executeTakeFirst();
  if (again) return Number(again.id);
  const row = await db
    .insertInto('reregistration_requests')
    .values({
      imei1: request.imei1,
      address: request.address,
      profile,
      public_key: request.publicKey,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

export async function reregistrationRequests(db: Db, imei1: string, limit = 20) {
  return db
    .selectFrom('reregistration_requests')
    .selectAll()
    .where('imei1', '=', imei1)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

/** Decides a pending request; returns the request as it was, or undefined when none is pending. */
export async function decideReregistration(
  db: Db,
  id: number,
  decision: { status: 'APPROVED' | 'REJECTED'; by: string; windowMs: number },
) {
  return db
    .updateTable('reregistration_requests')
    .set({
      status: decision.status,
      decided_at: sql<Date>`now()`,
      decided_by: decision.by,
      approved_until:
        decision.status === 'APPROVED'
          ? sql<Date>`now() + ${decision.windowMs} * interval '1 millisecond'`
          : null,
    })
    .where('id', '=', id)
    .where('status', '=', 'PENDING')
    .returning(['id', 'imei1', 'address', 'profile', 'public_key', 'approved_until'])
    .executeTakeFirst();
}

export async function findReregistrationRequest(db: Db, id: number) {
  return db
    .selectFrom('reregistration_requests')
    .innerJoin('devices', 'devices.imei1', 'reregistration_requests.imei1')
    .select([
      'reregistration_requests.id',
      'reregistration_requests.imei1',
      'reregistration_requests.status',
      'devices.retailer_phone',
    ])
    .where('reregistration_requests.id', '=', id)
    .executeTakeFirst();
}

/**
 * The dashboard's charts of the last 30 days: registrations per day, commands by status, devices online.
 * `days`: the operator's days (YYYY-MM-DD) and the UTC instants [start, end) each spans in their zone.
 * Of the scope: one retailer's registrations, devices and the commands sent to them, or all.
 */
export async function dashboardCounts(
  db: Db,
  scope: TenantScope,
  days: readonly { day: string; start: Date; end: Date }[],
) {
  const { retailerPhone } = scope;
  const ofRetailer = (column: string) =>
    retailerPhone === null ? sql`TRUE` : sql`${sql.ref(column)} = ${retailerPhone}`;
  const perDay = await sql<{ day: string; count: number }>`
    SELECT d.day, count(r.id)::int AS count
    FROM unnest(${days.map((d) => d.day)}::text[], ${days.map((d) => d.start.toISOString())}::timestamptz[],
      ${days.map((d) => d.end.toISOString())}::timestamptz[]) AS d(day, start_at, end_at)
    LEFT JOIN registrations r ON r.created_at >= d.start_at AND r.created_at < d.end_at
      AND ${ofRetailer('r.retailer_phone')}
    GROUP BY d.day ORDER BY d.day`.execute(db);
  const byStatus = await db
    .selectFrom('commands')
    .select(['status', sql<number>`count(*)::int`.as('count')])
    .where('created_at', '>=', sql<Date>`now() - interval '30 days'`)
    .$if(retailerPhone !== null, (q) =>
      q.where(
        'imei1',
        'in',
        db
          .selectFrom('devices')
          .select('imei1')
          .where('retailer_phone', '=', retailerPhone ?? ''),
      ),
    )
    .groupBy('status')
    .orderBy('status')
    .execute();
  const devices = await db
    .selectFrom('devices')
    .select([
      sql<number>`count(*)::int`.as('total'),
      sql<number>`count(*) FILTER (WHERE online)::int`.as('online'),
    ])
    .$if(retailerPhone !== null, (q) => q.where('retailer_phone', '=', retailerPhone ?? ''))
    .executeTakeFirstOrThrow();
  return { perDay: perDay.rows, byStatus, devices };
}

// ---- Reads about devices (devices/service.ts): the dashboard, device details, the audit report ----

const count = sql<number>`count(*)::int`;

/**
 * The dashboard's counts: devices, de-enrolled ones, today's registrations (since `todayStart`, the start
 * of the operator's day; of the scope: one retailer's, or all).
 */
export async function homeCounts(db: Db, scope: TenantScope, todayStart: Date) {
  const { retailerPhone } = scope;
  const today = sql<Date>`${todayStart}::timestamptz`;
  return retailerPhone === null
    ? // Every device: the counters kept by triggers (migration 0007), 16 rows to add up, and today's
      // registrations (an index range), in one round trip.
      db
        .selectFrom('device_counts')
        .select([
          sql<number>`coalesce(sum(total), 0)::int`.as('total_device'),
          sql<number>`coalesce(sum(deenrolled), 0)::int`.as('deenroll'),
          sql<number>`(SELECT count(*)::int FROM registrations WHERE created_at >= ${today})`.as(
            'device_today',
          ),
        ])
        .executeTakeFirstOrThrow()
    : // One retailer's devices: counted in the (retailer_phone, claimstatus) index.
      db
        .selectFrom('devices')
        .where('retailer_phone', '=', retailerPhone)
        .select([
          count.as('total_device'),
          sql<number>`count(*) FILTER (WHERE claimstatus = 'DEENROLLED')::int`.as('deenroll'),
          sql<number>`(SELECT count(*)::int FROM registrations
            WHERE created_at >= ${today} AND retailer_phone = ${retailerPhone})`.as('device_today'),
        ])
        .executeTakeFirstOrThrow();
}

/** Devices by either IMEI (an array parameter: one query text, so one prepared statement, for any count). */
const byEitherImei = (db: Kysely<DB>, imeis: string[]) =>
  db
    .selectFrom('devices')
    .selectAll()
    .where((eb) =>
      eb.or([
        eb('imei1', '=', sql<string>`ANY(${imeis}::text[])`),
        eb('imei2', '=', sql<string>`ANY(${imeis}::text[])`),
      ]),
    );
const devicesByImeis = precompiled((db, imeis: string[]) => byEitherImei(db, imeis));
const retailerDevicesByImeis = precompiled((db, imeis: string[], retailerPhone: string) =>
  byEitherImei(db, imeis).where('retailer_phone', '=', retailerPhone),
);

/** Devices by imei1 or imei2, of the scope (one retailer's, or all). */
export async function devicesByEitherImei(
  db: Kysely<DB>,
  imeis: string[],
  scope: TenantScope,
): Promise<DeviceRow[]> {
  const { retailerPhone } = scope;
  return retailerPhone !== null
    ? retailerDevicesByImeis(db, imeis, retailerPhone)
    : devicesByImeis(db, imeis);
}

/**
 * The audit report of the device `imei1`: its registrations, releases, commands (the latest 5,000) and
 * de-enrollments, newest first.
 */
export async function auditReportRows(db: Db, imei1: string) {
  const [registration, release, commands, deenroll] = await Promise.all([
    db
      .selectFrom('registrations')
      .leftJoin('devices', 'devices.imei1', 'registrations.imei1')
      .select(REGISTRATION_COLUMNS)
      .where('registrations.imei1', '=', imei1)
      .orderBy('registrations.id', 'desc')
      .execute(),
    db.selectFrom('releases').selectAll().where('imei1', '=', imei1).orderBy('id', 'desc').execute(),
    db
      .selectFrom('commands')
      .select([
        'id',
        'transaction_id',
        'imei1',
        'command',
        'options',
        'interface',
        'status',
        'user_label',
        'created_at',
        'completed_at',
      ])
      .where('imei1', '=', imei1)
      .orderBy('id', 'desc')
      .limit(5000)
      .execute(),
    db.selectFrom('deenrollments').selectAll().where('imei1', '=', imei1).orderBy('id', 'desc').execute(),
  ]);
  return { registration, release, commands, deenroll };
}

/** Enrolled devices per app version (of the scope: one retailer's, or all), newest version first. */
export async function appVersionCounts(db: Db, scope: TenantScope) {
  const { retailerPhone } = scope;
  return db
    .selectFrom('devices')
    .$if(retailerPhone !== null, (q) => q.where('retailer_phone', '=', retailerPhone ?? ''))
    .select(['appversion', count.as('devices')])
    .where('claimstatus', '=', 'ENROLLED')
    .groupBy('appversion')
    .orderBy('appversion', 'desc')
    .execute();
}
