import type { AckMessage, CommandStatus, DeviceState, UserLevel } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { CommandRow, DB, DeviceRow } from '../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export type NewCommand = Omit<
  CommandRow,
  'id' | 'status' | 'created_at' | 'sent_at' | 'delivered_at' | 'completed_at' | 'result' | 'options'
> & { options: string; status?: CommandStatus; result?: string | null; completed_at?: Date | null };

export async function insertCommand(db: Db, command: NewCommand): Promise<void> {
  await db.insertInto('commands').values(command).execute();
}

/**
 * A device by either of its IMEIs, locked for the rest of the transaction (its latest version). By imei1
 * first (a primary-key probe, what nearly every call names), then by imei2.
 */
export async function lockDeviceByImei(trx: Transaction<DB>, imei: string): Promise<DeviceRow | undefined> {
  const byImei1 = await trx
    .selectFrom('devices')
    .selectAll()
    .where('imei1', '=', imei)
    .forUpdate()
    .executeTakeFirst();
  if (byImei1) return byImei1;
  return trx
    .selectFrom('devices')
    .selectAll()
    .where('imei2', '=', imei)
    .orderBy('imei1')
    .limit(1)
    .forUpdate()
    .executeTakeFirst();
}

/**
 * The devices among `imeis` (by imei1) that no other transaction holds, locked for the rest of this one,
 * in IMEI order. Devices another transaction holds are skipped, not waited for: see CommandService.issue.
 */
export async function lockFreeDevices(trx: Transaction<DB>, imeis: readonly string[]): Promise<DeviceRow[]> {
  if (imeis.length === 0) return [];
  return trx
    .selectFrom('devices')
    .selectAll()
    .where('imei1', '=', sql<string>`ANY(${[...new Set(imeis)]}::text[])`)
    .orderBy('imei1')
    .forUpdate()
    .skipLocked()
    .execute();
}

/** An audit row's values (see appendAudit), written in the same statement as the command. */
export interface AuditValues {
  actor_user_id: number | null;
  actor_key_id: number | null;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  result: string;
  details: string | null;
}

export interface RecordedCommand {
  id: number;
  transaction_id: string;
  status: CommandStatus;
  created_at: Date;
}

/** One command to record (see `recordCommands`). */
export interface CommandRecord {
  command: NewCommand;
  /** The device's desired state after this command (state commands), as JSON. */
  desired: string | null;
  /** The device is online and the broker reachable: record it SENT, for the caller to publish. */
  sendNow: boolean;
  audit: AuditValues | null;
}

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : String(value);

/**
 * Records commands in one statement, each on a different device that the transaction holds locked:
 * older never-sent commands on the same device and state key become SUPERSEDED, each device's desired
 * state (`desired`, for state commands) and last command are set, and the commands are inserted. One
 * with `sendNow` is recorded as SENT, for the caller to publish after commit, unless an older command of
 * its device is still QUEUED: then it stays QUEUED and a dispatch sends both in order. The audit rows,
 * where given, are appended by the same statement. A single command is a list of one: single commands
 * arriving together are recorded in one transaction (see CommandService.issue). The rows come back in no
 * particular order: match them by transaction id.
 */
export async function recordCommands(
  trx: Transaction<DB>,
  records: readonly CommandRecord[],
): Promise<RecordedCommand[]> {
  if (records.length === 0) return [];
  if (new Set(records.map((r) => r.command.imei1)).size !== records.length)
    throw new Error('recordCommands: one command per device');
  // Every column as text, cast in SQL: arrays of dates and numbers travel the same on pg and PGlite.
  const column = (pick: (r: CommandRecord) => unknown) => records.map((r) => text(pick(r)));
  const result = await sql<RecordedCommand>`
    WITH v AS (
      SELECT * FROM unnest(
        ${column((r) => r.command.transaction_id)}::text[], ${column((r) => r.command.imei1)}::text[],
        ${column((r) => r.command.command)}::text[], ${column((r) => r.command.options)}::text[],
        ${column((r) => r.command.kind)}::text[], ${column((r) => r.command.state_key)}::text[],
        ${column((r) => r.command.interface)}::text[], ${column((r) => r.command.status ?? 'QUEUED')}::text[],
        ${column((r) => r.command.result)}::text[], ${column((r) => r.command.completed_at)}::text[],
        ${column((r) => r.command.priority)}::text[], ${column((r) => r.command.user_label)}::text[],
        ${column((r) => r.command.user_id)}::text[], ${column((r) => r.command.key_id)}::text[],
        ${column((r) => r.command.batch_id)}::text[], ${column((r) => r.command.expires_at)}::text[],
        ${column((r) => r.desired)}::text[], ${column((r) => r.sendNow)}::text[],
        ${column((r) => r.audit !== null)}::text[], ${column((r) => r.audit?.actor_user_id)}::text[],
        ${column((r) => r.audit?.actor_key_id)}::text[], ${column((r) => r.audit?.actor)}::text[],
        ${column((r) => r.audit?.action)}::text[], ${column((r) => r.audit?.target)}::text[],
        ${column((r) => r.audit?.address)}::text[], ${column((r) => r.audit?.result)}::text[],
        ${column((r) => r.audit?.details)}::text[]
      ) AS v(tid, imei1, command, options, kind, state_key, iface, status, result, completed_at, priority,
             user_label, user_id, key_id, batch_id, expires_at, desired, send_now, audited, a_user_id, a_key_id,
             a_actor, a_action, a_target, a_address, a_result, a_details)
    ), audited AS (
      INSERT INTO audit_log (actor_user_id, actor_key_id, actor, action, target, address, result, details)
      SELECT a_user_id::int, a_key_id::int, a_actor, a_action, a_target, a_address, a_result, a_details::jsonb
      FROM v WHERE audited::boolean
    ), superseded AS (
      UPDATE commands c SET status = 'SUPERSEDED', completed_at = now()
      FROM v
      WHERE v.state_key IS NOT NULL AND c.imei1 = v.imei1 AND c.state_key = v.state_key AND c.status = 'QUEUED'
    ), device AS (
      UPDATE devices d SET desired_state = coalesce(v.desired::jsonb, d.desired_state),
        last_command = v.command, last_command_at = now()
      FROM v WHERE d.imei1 = v.imei1
    ), decided AS (
      SELECT v.*, CASE WHEN v.send_now::boolean AND v.status = 'QUEUED'
                        AND NOT EXISTS (SELECT 1 FROM commands c WHERE c.imei1 = v.imei1 AND c.status = 'QUEUED')
                       THEN 'SENT' ELSE v.status END AS final_status
      FROM v
    )
    INSERT INTO commands (transaction_id, imei1, command, options, kind, state_key, interface, status, sent_at,
                          result, completed_at, priority, user_label, user_id, key_id, batch_id, expires_at)
    SELECT tid, imei1, command, options::jsonb, kind, state_key, iface, final_status,
           CASE WHEN final_status = 'SENT' THEN now() END, result, completed_at::timestamptz, priority::smallint,
           user_label, user_id::int, key_id::int, batch_id::bigint, expires_at::timestamptz
    FROM decided
    RETURNING id, transaction_id, status, created_at`.execute(trx);
  if (result.rows.length !== records.length) throw new Error('commands not recorded');
  return result.rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** Marks older never-sent commands of the same device and state key SUPERSEDED; returns how many. */
export async function supersedeQueued(db: Db, imei1: string, stateKey: string): Promise<number> {
  const result = await db
    .updateTable('commands')
    .set({ status: 'SUPERSEDED', completed_at: sql<Date>`now()` as unknown as Date })
    .where('imei1', '=', imei1)
    .where('state_key', '=', stateKey)
    .where('status', '=', 'QUEUED')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** A claimed command becomes SENT, unless it was DELIVERED already (sent again after a reconnect). */
const CLAIMED_STATUS = sql`CASE WHEN status = 'DELIVERED' THEN 'DELIVERED' ELSE 'SENT' END`;

export interface ClaimedCommand {
  id: number;
  transaction_id: string;
  command: CommandRow['command'];
  options: CommandRow['options'];
  created_at: Date;
}

/**
 * Claims the commands to send to one online device, oldest first: every QUEUED one, and SENT ones not yet
 * acknowledged (all of them after a reconnect, else those older than `resendAfterMs`). After a reconnect
 * (`reconnected`), DELIVERED ones too: the agent may have stopped between its two acknowledgements, and
 * answers an id it has executed with EXECUTED again (docs/device-protocol.md); they stay DELIVERED. SKIP
 * LOCKED lets several instances dispatch at once without sending a command twice at the same moment.
 */
export async function claimForDispatch(
  db: Kysely<DB>,
  imei1: string,
  resendAfterMs: number,
  reconnected = false,
): Promise<ClaimedCommand[]> {
  const result = await sql<ClaimedCommand>`
    UPDATE commands SET status = ${CLAIMED_STATUS}, sent_at = now()
    WHERE id IN (
      SELECT c.id FROM commands c JOIN devices d ON d.imei1 = c.imei1 AND d.online
      WHERE c.imei1 = ${imei1}
        AND (c.status = 'QUEUED' OR (c.status = 'SENT' AND c.sent_at <= now() - ${resendAfterMs} * interval '1 millisecond')
             OR (${reconnected} AND c.status = 'DELIVERED'))
      ORDER BY c.id
      FOR UPDATE OF c SKIP LOCKED
    )
    RETURNING id, transaction_id, command, options, created_at`.execute(db);
  return [...result.rows].sort((a, b) => Number(a.id) - Number(b.id));
}

export async function unclaim(db: Db, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('commands')
    .set({ status: 'QUEUED' })
    .where('id', 'in', ids)
    .where('status', '=', 'SENT')
    .execute();
}

/**
 * Online devices with something to send (QUEUED, or SENT and unacknowledged for `resendAfterMs`). Each
 * part reads a partial index holding only that work (migration 0007), not every pending command.
 */
export async function devicesWithWork(db: Db, resendAfterMs: number, limit: number): Promise<string[]> {
  // Materialised first: the work is small and indexed, while the devices online may be a million (and
  // statistics taken when few were online would start the join from them).
  const rows = await sql<{ imei1: string }>`
    WITH work AS MATERIALIZED (
      SELECT imei1 FROM commands WHERE status = 'QUEUED'
      UNION
      SELECT imei1 FROM commands
      WHERE status = 'SENT' AND sent_at <= now() - ${resendAfterMs} * interval '1 millisecond'
    )
    SELECT w.imei1 FROM work w JOIN devices d ON d.imei1 = w.imei1 AND d.online
    LIMIT ${limit}`.execute(db);
  return rows.rows.map((r) => r.imei1);
}

export async function expireCommands(db: Db): Promise<number> {
  const result = await db
    .updateTable('commands')
    .set({ status: 'EXPIRED', completed_at: sql<Date>`now()` as unknown as Date })
    .where('status', 'in', ['QUEUED', 'SENT'])
    .where('expires_at', 'is not', null)
    .where('expires_at', '<', sql<Date>`now()`)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Applies a device's acknowledgement; returns the command when it changed. */
export async function applyAck(
  db: Db,
  imei1: string,
  ack: AckMessage,
): Promise<Pick<CommandRow, 'id' | 'command' | 'transaction_id' | 'user_label' | 'status'> | undefined> {
  const query = db.updateTable('commands').where('transaction_id', '=', ack.id).where('imei1', '=', imei1);
  const returning = ['id', 'command', 'transaction_id', 'user_label', 'status'] as const;
  if (ack.status === 'DELIVERED') {
    return query
      .set({ status: 'DELIVERED', delivered_at: sql<Date>`now()` as unknown as Date })
      .where('status', 'in', ['QUEUED', 'SENT'])
      .returning(returning)
      .executeTakeFirst();
  }
  // The device's word is final: an executed command counts even if it was cancelled or superseded meanwhile.
  return query
    .set({
      status: ack.status,
      completed_at: sql<Date>`now()` as unknown as Date,
      delivered_at: sql<Date>`coalesce(delivered_at, now())` as unknown as Date,
      result: ack.result ?? null,
    })
    .where('status', 'not in', ['EXECUTED', 'FAILED'])
    .returning(returning)
    .executeTakeFirst();
}

export async function cancelQueued(db: Db, transactionId: string): Promise<CommandRow | undefined> {
  return db
    .updateTable('commands')
    .set({ status: 'CANCELLED', completed_at: sql<Date>`now()` as unknown as Date })
    .where('transaction_id', '=', transactionId)
    .where('status', '=', 'QUEUED')
    .returningAll()
    .executeTakeFirst();
}

export async function findCommand(db: Db, transactionId: string): Promise<CommandRow | undefined> {
  return db.selectFrom('commands').selectAll().where('transaction_id', '=', transactionId).executeTakeFirst();
}

/** How many commands of a batch are in each status. */
export async function countBatchCommandsByStatus(
  db: Db,
  batchId: number,
): Promise<{ status: CommandStatus; n: number }[]> {
  return db
    .selectFrom('commands')
    .select(['status', db.fn.countAll<number>().as('n')])
    .where('batch_id', '=', batchId)
    .groupBy('status')
    .execute();
}

/** A command with the current level of the user who issued it (null: the system, or no such user). */
export async function findCommandWithIssuer(
  db: Db,
  transactionId: string,
): Promise<(CommandRow & { issuer_level: UserLevel | null }) | undefined> {
  return db
    .selectFrom('commands')
    .leftJoin('users', 'users.id', 'commands.user_id')
    .selectAll('commands')
    .select('users.userlevel as issuer_level')
    .where('commands.transaction_id', '=', transactionId)
    .executeTakeFirst();
}

export async function pendingCommands(db: Db, imei1: string): Promise<CommandRow[]> {
  return db
    .selectFrom('commands')
    .selectAll()
    .where('imei1', '=', imei1)
    .where('status', 'in', ['QUEUED', 'SENT', 'DELIVERED'])
    .orderBy('id')
    .execute();
}

export async function hasPendingForKey(db: Db, imei1: string, stateKey: string): Promise<boolean> {
  const row = await db
    .selectFrom('commands')
    .select('id')
    .where('imei1', '=', imei1)
    .where('state_key', '=', stateKey)
    .where('status', 'in', ['QUEUED', 'SENT', 'DELIVERED'])
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * The desired value of one state key: what the latest command still standing on that key sets
 * (QUEUED, SENT, DELIVERED or EXECUTED), or the initial value. Cancelled, superseded, expired and
 * failed commands do not count.
 */
export async function latestStandingCommand(
  db: Db,
  imei1: string,
  stateKey: string,
): Promise<Pick<CommandRow, 'command' | 'options'> | undefined> {
  return db
    .selectFrom('commands')
    .select(['command', 'options'])
    .where('imei1', '=', imei1)
    .where('state_key', '=', stateKey)
    .where('status', 'in', ['QUEUED', 'SENT', 'DELIVERED', 'EXECUTED'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

// ---- Set-based forms, for the device channel's message stream and for batches ----

export interface ClaimedDeviceCommand extends ClaimedCommand {
  imei1: string;
}

/**
 * `claimForDispatch` for many devices in one statement: their commands to send, oldest first per device.
 * With `resendAfterMs` 0 every SENT one is claimed again (the devices reconnected).
 */
export async function claimForDispatchMany(
  db: Db,
  imeis: readonly string[],
  resendAfterMs: number,
  reconnected = false,
): Promise<ClaimedDeviceCommand[]> {
  if (imeis.length === 0) return [];
  const result = await sql<ClaimedDeviceCommand>`
    UPDATE commands SET status = ${CLAIMED_STATUS}, sent_at = now()
    WHERE id IN (
      -- Driven by the list (a probe per device): \`imei1 = ANY(list)\` may instead be planned as a probe
      -- of the whole list for every device online, which is quadratic when thousands come online.
      SELECT c.id FROM unnest(${imeis}::text[]) AS v(imei)
      JOIN commands c ON c.imei1 = v.imei
      JOIN devices d ON d.imei1 = c.imei1 AND d.online
      WHERE c.status = 'QUEUED' OR (c.status = 'SENT' AND c.sent_at <= now() - ${resendAfterMs} * interval '1 millisecond')
         OR (${reconnected} AND c.status = 'DELIVERED')
      ORDER BY c.id
      FOR UPDATE OF c SKIP LOCKED
    )
    RETURNING id, transaction_id, imei1, command, options, created_at`.execute(db);
  return [...result.rows].sort((a, b) => Number(a.id) - Number(b.id));
}

/** Marks the commands of a batch that wait for online devices SENT and returns them (device action ALL). */
export async function claimBatchForDispatch(db: Db, batchId: number): Promise<ClaimedDeviceCommand[]> {
  const result = await sql<ClaimedDeviceCommand>`
    UPDATE commands c SET status = 'SENT', sent_at = now()
    FROM devices d
    WHERE c.batch_id = ${batchId} AND c.status = 'QUEUED' AND d.imei1 = c.imei1 AND d.online
    RETURNING c.id, c.transaction_id, c.imei1, c.command, c.options, c.created_at`.execute(db);
  return [...result.rows].sort((a, b) => Number(a.id) - Number(b.id));
}

/** Locks devices in IMEI order (the order every writer of several devices takes them in). */
export async function lockDevices(trx: Transaction<DB>, imeis: readonly string[]): Promise<void> {
  if (imeis.length === 0) return;
  await sql`SELECT 1 FROM devices WHERE imei1 = ANY(${[...new Set(imeis)]}::text[]) ORDER BY imei1 FOR UPDATE`.execute(
    trx,
  );
}

/** Online or offline, for many devices (the last word per device wins). */
export async function setOnlineMany(db: Db, entries: ReadonlyMap<string, boolean>): Promise<void> {
  if (entries.size === 0) return;
  await sql`
    UPDATE devices d SET online = v.online, last_seen_at = now()
    FROM unnest(${[...entries.keys()]}::text[], ${[...entries.values()]}::boolean[]) AS v(imei, online)
    WHERE d.imei1 = v.imei`.execute(db);
}

export interface AckEntry {
  imei1: string;
  id: string;
  status: AckMessage['status'];
  result: string | null;
}

export type AckedCommand = Pick<
  CommandRow,
  'id' | 'command' | 'transaction_id' | 'user_label' | 'status' | 'imei1'
>;

/**
 * `applyAck` for many acknowledgements, each command at most once per call: DELIVERED ones move QUEUED or
 * SENT commands; EXECUTED and FAILED ones are final (see `applyAck`). Returns the commands whose final
 * acknowledgement has consequences beyond their own row: those that FAILED, and executed releases.
 */
export async function applyAcks(db: Db, acks: readonly AckEntry[]): Promise<AckedCommand[]> {
  const delivered = acks.filter((a) => a.status === 'DELIVERED');
  const final = acks.filter((a) => a.status !== 'DELIVERED');
  if (delivered.length > 0) {
    await sql`
      UPDATE commands c SET status = 'DELIVERED', delivered_at = now()
      FROM unnest(${delivered.map((a) => a.id)}::text[], ${delivered.map((a) => a.imei1)}::text[]) AS v(id, imei)
      WHERE c.transaction_id = v.id AND c.imei1 = v.imei AND c.status IN ('QUEUED', 'SENT')`.execute(db);
  }
  if (final.length === 0) return [];
  const changed = await sql<AckedCommand>`
    WITH changed AS (
      UPDATE commands c SET status = v.status, completed_at = now(), delivered_at = coalesce(c.delivered_at, now()),
        result = v.result
      FROM unnest(${final.map((a) => a.id)}::text[], ${final.map((a) => a.imei1)}::text[],
                  ${final.map((a) => a.status)}::text[], ${final.map((a) => a.result)}::text[]) AS v(id, imei, status, result)
      WHERE c.transaction_id = v.id AND c.imei1 = v.imei AND c.status NOT IN ('EXECUTED', 'FAILED')
      RETURNING c.id, c.command, c.transaction_id, c.user_label, c.status, c.imei1
    )
    SELECT * FROM changed WHERE status = 'FAILED' OR command = 'RELEASE'`.execute(db);
  return changed.rows;
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
): Promise<Pick<DeviceRow, 'imei1' | 'claimstatus' | 'desired_state' | 'reported_state'>[]> {
  if (entries.size === 0) return [];
  const imeis = [...entries.keys()];
  const values = [...entries.values()];
  const result = await sql<Pick<DeviceRow, 'imei1' | 'claimstatus' | 'desired_state' | 'reported_state'>>`
    WITH reported AS (
      UPDATE devices d SET reported_state = coalesce(v.state::jsonb, d.reported_state), last_seen_at = now(),
        appversion = coalesce(nullif(v.appversion, ''), d.appversion)
      FROM unnest(${imeis}::text[], ${values.map((v) => (v.state ? JSON.stringify(v.state) : null))}::text[],
                  ${values.map((v) => v.appversion)}::text[], ${imeis.map((imei) => reconcile.has(imei))}::boolean[])
        AS v(imei, state, appversion, reconcile)
      WHERE d.imei1 = v.imei
      RETURNING d.imei1, d.claimstatus, d.desired_state, d.reported_state, v.reconcile
    )
    SELECT imei1, claimstatus, desired_state, reported_state FROM reported
    WHERE reconcile AND claimstatus = 'ENROLLED'
      AND NOT (reported_state @> (${JSON.stringify(initial)}::jsonb || desired_state))`.execute(db);
  return result.rows;
}

/** The state keys with a pending command, per device. */
export async function pendingKeysMany(db: Db, imeis: readonly string[]): Promise<Set<string>> {
  if (imeis.length === 0) return new Set();
  const rows = await sql<{ imei1: string; state_key: string }>`
    SELECT DISTINCT imei1, state_key FROM commands
    WHERE imei1 = ANY(${imeis}::text[]) AND state_key IS NOT NULL AND status IN ('QUEUED', 'SENT', 'DELIVERED')`.execute(
    db,
  );
  return new Set(rows.rows.map((r) => `${r.imei1}|${r.state_key}`));
}
