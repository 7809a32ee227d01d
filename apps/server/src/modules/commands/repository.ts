import type { AckMessage, CommandStatus, UserLevel } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { CommandRow, DB } from '../../db/types';
import type { AuditValues } from '../audit/repository';
import { appendAuditRowsFrom } from '../audit/repository';
import { recordOnDevicesFrom } from '../devices/repository';

type Db = Kysely<DB> | Transaction<DB>;

/** A command row to insert (see `recordCommands`). */
export type NewCommand = Omit<
  CommandRow,
  'id' | 'status' | 'created_at' | 'sent_at' | 'delivered_at' | 'completed_at' | 'result' | 'options'
> & { options: string; status?: CommandStatus; result?: string | null; completed_at?: Date | null };

export interface RecordedCommand {
  id: number;
  transaction_id: string;
  imei1: string;
  status: CommandStatus;
  created_at: Date;
}

/** One command to record (see `recordCommands`). */
export interface CommandRecord {
  command: NewCommand;
  /** The part of the device's desired state this command sets (state commands), as JSON. */
  patch: string | null;
  /**
   * The command decides its keys' values: the device records its cause and now as who decided them
   * (false: the reconcile restores a value, and who decided it stays).
   */
  decides: boolean;
  /** The device is online and the broker reachable: record it SENT, for the caller to publish. */
  sendNow: boolean;
  audit: AuditValues | null;
}

const text = (value: unknown): string | null =>
  value === null || value === undefined ? null : value instanceof Date ? value.toISOString() : String(value);

/** The columns of `recordCommands`' rows, each as text (cast in SQL: travels the same on pg and PGlite). */
const RECORD_COLUMNS: readonly [string, (r: CommandRecord) => unknown][] = [
  ['tid', (r) => r.command.transaction_id],
  ['imei1', (r) => r.command.imei1],
  ['command', (r) => r.command.command],
  ['options', (r) => r.command.options],
  ['kind', (r) => r.command.kind],
  ['state_key', (r) => r.command.state_key],
  ['iface', (r) => r.command.interface],
  ['status', (r) => r.command.status ?? 'QUEUED'],
  ['result', (r) => r.command.result],
  ['completed_at', (r) => r.command.completed_at],
  ['priority', (r) => r.command.priority],
  ['user_label', (r) => r.command.user_label],
  ['user_id', (r) => r.command.user_id],
  ['key_id', (r) => r.command.key_id],
  ['batch_id', (r) => r.command.batch_id],
  ['expires_at', (r) => r.command.expires_at],
  ['cause', (r) => r.command.cause],
  ['patch', (r) => r.patch],
  ['decides', (r) => r.decides],
  ['send_now', (r) => r.sendNow],
  ['audited', (r) => r.audit !== null],
  ['a_user_id', (r) => r.audit?.actor_user_id],
  ['a_key_id', (r) => r.audit?.actor_key_id],
  ['a_actor', (r) => r.audit?.actor],
  ['a_action', (r) => r.audit?.action],
  ['a_target', (r) => r.audit?.target],
  ['a_address', (r) => r.audit?.address],
  ['a_result', (r) => r.audit?.result],
  ['a_details', (r) => r.audit?.details],
];

/**
 * The rows to record, as one row source: a column whose value differs between rows travels as an array
 * (unnest), one that every row shares (a batch chunk's command, user, batch…) as a single parameter, so
 * that a chunk of 500 sends a handful of arrays rather than 27.
 */
function recordValues(records: readonly CommandRecord[]) {
  const arrays: { name: string; values: (string | null)[] }[] = [];
  const shared: { name: string; value: string | null }[] = [];
  for (const [name, pick] of RECORD_COLUMNS) {
    const values = records.map((r) => text(pick(r)));
    const first = values[0] ?? null;
    if (name === 'tid' || values.some((v) => v !== first)) arrays.push({ name, values });
    else shared.push({ name, value: first });
  }
  return sql`SELECT u.*${sql.join(
    shared.map((c) => sql`, ${c.value}::text AS ${sql.ref(c.name)}`),
    sql``,
  )} FROM unnest(${sql.join(arrays.map((c) => sql`${c.values}::text[]`))}) AS u(${sql.join(
    arrays.map((c) => sql.ref(c.name)),
  )})`;
}

/**
 * Records commands in ONE statement, each on a different device that the transaction holds locked (the
 * rules that decide which commands to record are in commands/issue.ts, the only caller): older
 * never-sent commands on the same device and state key become SUPERSEDED; each device's desired state
 * takes the command's `patch` (and, for a command that decides it, who decided: its cause, now) and its
 * last command is set (through devices/repository.ts, the one writer of devices); the commands are inserted. One with `sendNow`
 * is recorded as SENT, for the caller to publish after commit, unless an older command of its device
 * (one it does not supersede) is still QUEUED: then it stays QUEUED and a dispatch sends both in order.
 * The audit rows, where given, are appended by the same statement (through audit/repository.ts, the one
 * writer of audit_log). The rows come back in no particular order: match them by transaction id.
 */
export async function recordCommands(
  trx: Transaction<DB>,
  records: readonly CommandRecord[],
): Promise<RecordedCommand[]> {
  if (records.length === 0) return [];
  if (new Set(records.map((r) => r.command.imei1)).size !== records.length)
    throw new Error('recordCommands: one command per device');
  // Every column as text, cast in SQL: arrays of dates and numbers travel the same on pg and PGlite.
  const result = await sql<RecordedCommand>`
    WITH v AS (${recordValues(records)}), audited AS (
      ${appendAuditRowsFrom(sql`SELECT a_user_id, a_key_id, a_actor, a_action, a_target, a_address, a_result,
                                       a_details FROM v WHERE audited::boolean`)}
    ), superseded AS (
      UPDATE commands c SET status = 'SUPERSEDED', completed_at = now()
      FROM v
      WHERE v.state_key IS NOT NULL AND c.imei1 = v.imei1 AND c.state_key = v.state_key AND c.status = 'QUEUED'
    ), device AS (
      ${recordOnDevicesFrom(sql`SELECT imei1, command, patch, decides, cause FROM v`)}
    ), decided AS (
      -- A probe of the small partial index of QUEUED commands (migration 0007).
      SELECT v.*, CASE WHEN v.send_now::boolean AND v.status = 'QUEUED'
                        AND NOT EXISTS (SELECT 1 FROM commands c WHERE c.imei1 = v.imei1 AND c.status = 'QUEUED'
                                          AND (v.state_key IS NULL OR c.state_key IS DISTINCT FROM v.state_key))
                       THEN 'SENT' ELSE v.status END AS final_status
      FROM v
    )
    INSERT INTO commands (transaction_id, imei1, command, options, kind, state_key, interface, status, sent_at,
                          result, completed_at, priority, user_label, user_id, key_id, batch_id, expires_at, cause)
    SELECT tid, imei1, command, options::jsonb, kind, state_key, iface, final_status,
           CASE WHEN final_status = 'SENT' THEN now() END, result, completed_at::timestamptz, priority::smallint,
           user_label, user_id::int, key_id::int, batch_id::bigint, expires_at::timestamptz, cause
    FROM decided
    RETURNING id, transaction_id, imei1, status, created_at`.execute(trx);
  if (result.rows.length !== records.length) throw new Error('commands not recorded');
  return result.rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** A claimed command becomes SENT, unless it was DELIVERED already (sent again after a reconnect). */
const CLAIMED_STATUS = sql`CASE WHEN status = 'DELIVERED' THEN 'DELIVERED' ELSE 'SENT' END`;

export interface ClaimedCommand {
  id: number;
  transaction_id: string;
  command: CommandRow['command'];
  options: CommandRow['options'];
  created_at: Date;
  /** Single and API 2, reconcile 1, batch and ALL 0 (commands/issue.ts). */
  priority: number;
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
    RETURNING id, transaction_id, command, options, created_at, priority`.execute(db);
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

/** Expires the one-shot commands past their time; returns them. */
export async function expireCommands(db: Db) {
  return db
    .updateTable('commands')
    .set({ status: 'EXPIRED', completed_at: sql<Date>`now()` })
    .where('status', 'in', ['QUEUED', 'SENT'])
    .where('expires_at', 'is not', null)
    .where('expires_at', '<', sql<Date>`now()`)
    .returning(['transaction_id', 'imei1', 'command', 'status', 'interface', 'batch_id', 'result'])
    .execute();
}

export async function cancelQueued(db: Db, transactionId: string): Promise<CommandRow | undefined> {
  return db
    .updateTable('commands')
    .set({ status: 'CANCELLED', completed_at: sql<Date>`now()` })
    .where('transaction_id', '=', transactionId)
    .where('status', '=', 'QUEUED')
    .returningAll()
    .executeTakeFirst();
}

export async function findCommand(db: Db, transactionId: string): Promise<CommandRow | undefined> {
  return db.selectFrom('commands').selectAll().where('transaction_id', '=', transactionId).executeTakeFirst();
}

/**
 * How many commands of a batch are in each status, the batch's rows the workers have not reached yet
 * counted as QUEUED (device action ALL runs as a batch), read in one statement: one snapshot, so a chunk
 * committing meanwhile is counted once.
 */
export async function countBatchCommandsByStatus(
  db: Db,
  batchId: number,
): Promise<{ status: CommandStatus; n: number }[]> {
  const rows = await sql<{ status: CommandStatus; n: number }>`
    SELECT status, count(*)::int AS n FROM commands WHERE batch_id = ${batchId} GROUP BY status
    UNION ALL
    SELECT 'QUEUED', greatest(valid - processed, 0)::int FROM batches
    WHERE id = ${batchId} AND status = 'incomplete' AND valid > processed`.execute(db);
  const byStatus = new Map<CommandStatus, number>();
  for (const row of rows.rows) byStatus.set(row.status, (byStatus.get(row.status) ?? 0) + Number(row.n));
  return [...byStatus].map(([status, n]) => ({ status, n }));
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

/**
 * The desired value of one state key: what the latest command still standing on that key sets
 * (QUEUED, SENT, DELIVERED or EXECUTED), or the initial value. Cancelled, superseded, expired and
 * failed commands do not count.
 */
export async function latestStandingCommand(
  db: Db,
  imei1: string,
  stateKey: string,
): Promise<Pick<CommandRow, 'command' | 'options' | 'cause' | 'interface' | 'created_at'> | undefined> {
  return db
    .selectFrom('commands')
    .select(['command', 'options', 'cause', 'interface', 'created_at'])
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
 * Commands of several devices in the order to publish them: the devices with the most urgent work first
 * (priority, highest first: a single command ahead of batch work), each device's commands oldest first
 * (by id: a device executes its commands in the order they were issued).
 */
export function byPriority<T extends { id: number; imei1: string; priority: number }>(
  rows: readonly T[],
): T[] {
  const top = new Map<string, number>();
  for (const row of rows) top.set(row.imei1, Math.max(top.get(row.imei1) ?? 0, Number(row.priority)));
  return [...rows].sort(
    (a, b) => (top.get(b.imei1) ?? 0) - (top.get(a.imei1) ?? 0) || Number(a.id) - Number(b.id),
  );
}

/**
 * `claimForDispatch` for many devices in one statement: their commands to send, in `byPriority` order.
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
      ORDER BY c.priority DESC, c.id
      FOR UPDATE OF c SKIP LOCKED
    )
    RETURNING id, transaction_id, imei1, command, options, created_at, priority`.execute(db);
  return byPriority(result.rows);
}

export interface AckEntry {
  imei1: string;
  id: string;
  status: AckMessage['status'];
  result: string | null;
}

export type AckedCommand = Pick<
  CommandRow,
  | 'id'
  | 'command'
  | 'transaction_id'
  | 'user_label'
  | 'status'
  | 'imei1'
  | 'interface'
  | 'batch_id'
  | 'result'
>;

/**
 * Applies devices' acknowledgements, each command at most once per call: DELIVERED ones move QUEUED or
 * SENT commands; EXECUTED and FAILED ones are final, whatever the command's status (the device did act:
 * an executed command counts even if it was cancelled or superseded meanwhile), and later ones change
 * nothing. Returns the commands whose final acknowledgement has consequences beyond their own row: those
 * that FAILED, and executed releases; with `everyFinal` (webhooks want them), every command whose final
 * acknowledgement changed it.
 */
export async function applyAcks(
  db: Db,
  acks: readonly AckEntry[],
  everyFinal = false,
): Promise<AckedCommand[]> {
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
      RETURNING c.id, c.command, c.transaction_id, c.user_label, c.status, c.imei1, c.interface, c.batch_id,
        c.result
    )
    SELECT * FROM changed WHERE ${everyFinal} OR status = 'FAILED' OR command = 'RELEASE'`.execute(db);
  return changed.rows;
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
