/**
 * The one command service (design.md §4): every single, API, batch and device-action command goes
 * through `issue`, with one set of rules (unknown IMEI → 'not found', a released or de-enrolled device
 * refused, retailer scoping, audit). The database is the source of truth: QUEUED → SENT (broker accepted)
 * → DELIVERED → EXECUTED | FAILED moved only by the device's own acknowledgements, or SUPERSEDED /
 * CANCELLED / EXPIRED. Online devices get their commands at once; others on reconnect.
 */
import { randomUUID } from 'node:crypto';
import {
  type AckMessage,
  applyCommand,
  type CommandInterface,
  type CommandOptions,
  type CommandStatus,
  commandForState,
  commandKind,
  type DeviceState,
  INITIAL_DEVICE_STATE,
  MESSAGES,
  type RawCommand,
  type StateMessage,
  stateKeyOf,
} from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import { type Kysely, sql, type Transaction } from 'kysely';
import { issuerLevel, mayCancelIssuedBy, mayUseCommand } from '../../authz/authority';
import { inTransaction } from '../../db/transaction';
import type { CommandRow, DB, DeviceRow } from '../../db/types';
import type { Principal } from '../../plugins/auth';
import { AppError, forbidden, notFound } from '../../plugins/errors';
import { appendAudit } from '../audit/repository';
import type { Gateway } from '../devices/gateway';
import { findDevice, lockDevice, setOnline, setReportedState } from '../devices/repository';
import {
  type AckEntry,
  type AckedCommand,
  applyAck,
  applyAcks,
  type ClaimedDeviceCommand,
  type CommandRecord,
  cancelQueued,
  claimBatchForDispatch,
  claimForDispatch,
  claimForDispatchMany,
  devicesWithWork,
  expireCommands,
  findCommandWithIssuer,
  latestStandingCommand,
  lockDeviceByImei,
  lockDevices,
  lockFreeDevices,
  pendingCommands,
  pendingKeysMany,
  type RecordedCommand,
  type ReportedEntry,
  recordCommands,
  setOnlineMany,
  setReportedStates,
  unclaim,
} from './repository';

export const COMMAND_MESSAGES = {
  notFound: 'not found',
  released: 'This device has been released and accepts no further commands.',
  deenrolled: 'This device is de-enrolled: it must register again before it can receive commands.',
  alreadySent: 'This command has already been sent to the device and can no longer be cancelled.',
  cancelled: 'Command cancelled',
  noSuchCommand: 'No such command',
  higherLevel: 'You cannot cancel a command issued by a higher level.',
} as const;

export interface IssueRequest {
  imei: string;
  command: RawCommand;
  options?: CommandOptions;
  iface: CommandInterface;
  /** The authenticated principal; null for the system (reconcile). */
  actor: Principal | null;
  batchId?: number | null;
  /** Higher goes first; single commands outrank batch work. */
  priority?: number;
  address?: string;
  /** Batch items are audited once per batch. */
  audit?: boolean;
}

export interface Issued {
  transactionId: string;
  imei1: string;
  status: CommandStatus;
}

export interface CommandServiceOptions {
  db: Kysely<DB>;
  log: FastifyBaseLogger;
  /** One-shot commands (notify, reboot, update) expire after this; state commands hold until replaced. */
  oneShotTtlMs: number;
  /** An unacknowledged SENT command is sent again after this (the device ignores ids it has executed). */
  resendAfterMs: number;
}

/** A message from a device, as the gateway hands it over. */
type DeviceMessage =
  | { kind: 'ack'; imei: string; ack: AckMessage }
  | { kind: 'state'; imei: string; message: StateMessage }
  | { kind: 'status'; imei: string; online: boolean };

/** Most device messages applied in one transaction. */
const INBOX_FLUSH_MAX = 5000;
/** How long the first message of a quiet moment waits for others before they are applied. */
const INBOX_GATHER_MS = 20;

function desiredOf(device: Pick<DeviceRow, 'desired_state'>): DeviceState {
  return { ...INITIAL_DEVICE_STATE, ...(device.desired_state ?? {}) };
}

/** Why a command for `device` is refused, if it is (the rules of every command, design.md §4). */
function refusalOf(device: DeviceRow | undefined, actor: Principal | null): AppError | null {
  // A retailer user sees only devices that retailer registered: others are simply not found.
  if (!device || (actor?.retailerPhone && device.retailer_phone !== actor.retailerPhone)) {
    return new AppError(404, 'NOT_FOUND', COMMAND_MESSAGES.notFound);
  }
  if (device.claimstatus === 'RELEASED' || desiredOf(device).released) {
    return new AppError(409, 'CONFLICT', COMMAND_MESSAGES.released);
  }
  if (device.claimstatus === 'DEENROLLED') return new AppError(409, 'CONFLICT', COMMAND_MESSAGES.deenrolled);
  return null;
}

const byTransactionId = (rows: readonly RecordedCommand[]) =>
  new Map(rows.map((row) => [row.transaction_id, row]));

/** Most single commands recorded in one transaction (see CommandService.issue). */
const GROUP_MAX = 200;
/** Transactions of single commands running at once. */
const GROUPS_IN_FLIGHT = 2;

interface WaitingIssue {
  request: IssueRequest;
  resolve(issued: Issued): void;
  reject(error: unknown): void;
}

/** A recorded command, with what its dispatch after commit needs. */
interface IssuedRecord {
  issued: Issued;
  online: boolean;
  claimed: ClaimedDeviceCommand;
  sent: boolean;
}

export class CommandService {
  private gateway: Gateway | null = null;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly inbox: { message: DeviceMessage; resolve(): void; reject(error: unknown): void }[] = [];
  private flushing = false;
  private readonly waiting: WaitingIssue[] = [];
  private readonly revocationListeners: ((imei1: string) => void)[] = [];
  private groupsInFlight = 0;

  constructor(private readonly options: CommandServiceOptions) {}

  attach(gateway: Gateway): void {
    this.gateway = gateway;
  }

  /** `listener` is told the imei1 of a device whose credential was replaced or revoked. */
  onCredentialRevoked(listener: (imei1: string) => void): void {
    this.revocationListeners.push(listener);
  }

  /** A device's credential was replaced (it registered again) or revoked (de-enrolled): say so. */
  credentialRevoked(imei1: string): void {
    for (const listener of this.revocationListeners) {
      try {
        listener(imei1);
      } catch (error) {
        this.options.log.warn({ err: error, imei1 }, 'credential revocation listener failed');
      }
    }
  }

  /** Whether commands can be published now (the broker is reachable). */
  get connected(): boolean {
    return this.gateway?.connected ?? false;
  }

  /**
   * Issues one command through the rules; sends it at once when the device is online.
   *
   * Single commands that arrive together are recorded together: while GROUPS_IN_FLIGHT transactions are
   * running, new requests wait and the next transaction takes up to GROUP_MAX of them (one lock statement,
   * one record statement and one commit for all, instead of four statements each). The rules and the
   * outcome of each command are those of a command on its own. A request whose device another transaction
   * holds (a batch chunk, say), that names a device by its imei2, or that names a device already in the
   * group, is issued on its own instead, waiting for its device as before; so is one whose group failed.
   */
  async issue(request: IssueRequest): Promise<Issued> {
    if (this.options.db.isTransaction || commandKind(request.command) === 'server')
      return this.issueAlone(request);
    return new Promise<Issued>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.startGroups();
    });
  }

  private startGroups(): void {
    while (this.groupsInFlight < GROUPS_IN_FLIGHT && this.waiting.length > 0) {
      const group = this.waiting.splice(0, GROUP_MAX);
      this.groupsInFlight += 1;
      void this.issueGroup(group).finally(() => {
        this.groupsInFlight -= 1;
        this.startGroups();
      });
    }
  }

  private async issueGroup(group: readonly WaitingIssue[]): Promise<void> {
    const alone: WaitingIssue[] = [];
    let done: { waiting: WaitingIssue; issued: IssuedRecord }[];
    const refused: { waiting: WaitingIssue; error: AppError }[] = [];
    try {
      done = await this.options.db.transaction().execute(async (trx) => {
        const devices = new Map(
          (
            await lockFreeDevices(
              trx,
              group.map((w) => w.request.imei),
            )
          ).map((d) => [d.imei1, d]),
        );
        const taken = new Set<string>();
        const planned: { waiting: WaitingIssue; record: CommandRecord; device: DeviceRow }[] = [];
        for (const waiting of group) {
          const device = devices.get(waiting.request.imei);
          if (!device || taken.has(device.imei1)) {
            alone.push(waiting);
            continue;
          }
          const refusal = refusalOf(device, waiting.request.actor);
          if (refusal) {
            refused.push({ waiting, error: refusal });
            continue;
          }
          taken.add(device.imei1);
          planned.push({ waiting, device, record: this.recordOf(waiting.request, device, true) });
        }
        const recorded = byTransactionId(
          await recordCommands(
            trx,
            planned.map((p) => p.record),
          ),
        );
        return planned.map((p) => ({
          waiting: p.waiting,
          issued: this.issuedOf(p.record, p.device, recorded, p.waiting.request.options),
        }));
      });
    } catch (error) {
      // The group failed as a whole (a lost connection, a deadlock): each command on its own, with its own
      // outcome.
      this.options.log.warn({ err: error, commands: group.length }, 'single commands: issuing one by one');
      await Promise.all(group.map((w) => this.issueAlone(w.request).then(w.resolve, w.reject)));
      return;
    }
    for (const { waiting, error } of refused) waiting.reject(error);
    this.afterCommit(done.map((d) => d.issued));
    for (const { waiting, issued } of done) waiting.resolve(issued.issued);
    await Promise.all(alone.map((w) => this.issueAlone(w.request).then(w.resolve, w.reject)));
  }

  /** One command in a transaction of its own (or the caller's). */
  private async issueAlone(request: IssueRequest): Promise<Issued> {
    const { db } = this.options;
    // With a transaction of its own, a command for an online device is recorded as SENT and published
    // after commit (as a dispatch claim would, one statement fewer); in a caller's transaction, the
    // dispatch after commit is the caller's.
    const ownTransaction = !db.isTransaction;
    // A command the server carries out itself (FORMATTEDDEVICE) de-enrolls the device: its credential goes.
    let revoked = false;
    const issued = await inTransaction(db, async (trx) => {
      // Serialise commands per device: two racing requests end in one well-defined order.
      const device = await lockDeviceByImei(trx, request.imei);
      const refusal = refusalOf(device, request.actor);
      if (refusal || !device) throw refusal;
      const record = this.recordOf(request, device, ownTransaction);
      if (record.command.kind === 'server') {
        revoked = true;
        // FORMATTEDDEVICE: the phone was formatted, its agent is gone; the server de-enrolls it.
        await trx
          .updateTable('devices')
          .set({ claimstatus: 'DEENROLLED', credential_hash: null, online: false })
          .where('imei1', '=', device.imei1)
          .execute();
        await trx
          .insertInto('deenrollments')
          .values({ imei1: device.imei1, imei2: device.imei2, action: 'DEENROLLED' })
          .execute();
      }
      const recorded = byTransactionId(await recordCommands(trx, [record]));
      return this.issuedOf(record, device, recorded, request.options);
    });
    if (ownTransaction) {
      this.afterCommit([issued]);
      if (revoked) this.credentialRevoked(issued.issued.imei1);
    }
    return issued.issued;
  }

  /** The row to record for `request` on `device` (locked), with the audit row that goes with it. */
  private recordOf(request: IssueRequest, device: DeviceRow, ownTransaction: boolean): CommandRecord {
    const kind = commandKind(request.command);
    const stateKey = stateKeyOf(request.command);
    const options = request.options ?? {};
    const transactionId = randomUUID();
    const actor = request.actor;
    // FORMATTEDDEVICE is carried out by the server itself (see issueAlone): recorded as executed.
    const status: CommandStatus = kind === 'server' ? 'EXECUTED' : 'QUEUED';
    return {
      command: {
        transaction_id: transactionId,
        imei1: device.imei1,
        command: request.command,
        options: JSON.stringify(options),
        kind,
        state_key: stateKey,
        interface: request.iface,
        status,
        result: kind === 'server' ? 'de-enrolled by the server' : null,
        completed_at: status === 'EXECUTED' ? new Date() : null,
        priority: request.priority ?? 0,
        user_label: actor?.email ?? 'system',
        user_id: actor?.userId ?? null,
        key_id: actor?.keyId ?? null,
        batch_id: request.batchId ?? null,
        expires_at: kind === 'oneshot' ? new Date(Date.now() + this.options.oneShotTtlMs) : null,
      },
      desired: stateKey ? JSON.stringify(applyCommand(desiredOf(device), request.command, options)) : null,
      sendNow: ownTransaction && status === 'QUEUED' && device.online && this.connected,
      // Who, as appendAudit records it: the user (and key), or the system.
      audit:
        request.audit === false
          ? null
          : {
              actor_user_id: actor?.userId ?? null,
              actor_key_id: actor?.keyId ?? null,
              actor: actor?.email ?? 'system',
              action: `command.${request.command}`,
              target: device.imei1,
              address: request.address ?? null,
              result: status,
              details: JSON.stringify({
                transactionId,
                interface: request.iface,
                options,
                batchId: request.batchId ?? null,
              }),
            },
    };
  }

  private issuedOf(
    record: CommandRecord,
    device: DeviceRow,
    recorded: ReadonlyMap<string, RecordedCommand>,
    options: CommandOptions = {},
  ): IssuedRecord {
    const c = record.command;
    const row = recorded.get(c.transaction_id);
    if (!row) throw new Error('command not recorded');
    return {
      issued: { transactionId: c.transaction_id, imei1: c.imei1, status: c.status ?? 'QUEUED' },
      online: device.online,
      claimed: {
        id: row.id,
        transaction_id: c.transaction_id,
        imei1: c.imei1,
        command: c.command,
        options,
        created_at: row.created_at,
      },
      sent: row.status === 'SENT',
    };
  }

  /** After commit: publishes the commands recorded SENT; sends the queued ones of online devices. */
  private afterCommit(issued: readonly IssuedRecord[]): void {
    const sent = issued.filter((i) => i.sent).map((i) => i.claimed);
    if (sent.length > 0) this.track(this.publishClaimed(sent));
    for (const i of issued) {
      if (!i.sent && i.online && i.issued.status === 'QUEUED') this.track(this.dispatch(i.issued.imei1));
    }
  }

  /**
   * Device action to ALL (design.md §4): one command per enrolled device, recorded under one batch so each
   * device's status can be followed; online devices get theirs at once.
   */
  async issueToAll(request: Omit<IssueRequest, 'imei'>): Promise<{ batchId: number; total: number }> {
    const { db } = this.options;
    const actor = request.actor;
    const options = request.options ?? {};
    const kind = commandKind(request.command);
    const created = await inTransaction(db, async (trx) => {
      const batch = await trx
        .insertInto('batches')
        .values({
          feature: 'deviceaction',
          command: request.command,
          options: JSON.stringify(options),
          interface: request.iface,
          user_label: actor?.email ?? 'system',
          user_id: actor?.userId ?? null,
          key_id: actor?.keyId ?? null,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const inserted = await sql<{ n: number }>`
        WITH added AS (
          INSERT INTO commands (transaction_id, imei1, command, options, kind, state_key, interface, priority,
                                user_label, user_id, key_id, batch_id, expires_at)
          SELECT gen_random_uuid()::text, d.imei1, ${request.command}, ${JSON.stringify(options)}::jsonb, ${kind},
                 ${stateKeyOf(request.command)}, ${request.iface}, ${request.priority ?? 0}, ${actor?.email ?? 'system'},
                 ${actor?.userId ?? null}, ${actor?.keyId ?? null}, ${batch.id},
                 ${kind === 'oneshot' ? new Date(Date.now() + this.options.oneShotTtlMs) : null}
          FROM devices d
          WHERE d.claimstatus = 'ENROLLED' AND coalesce((d.desired_state->>'released')::boolean, false) = false
            ${actor?.retailerPhone ? sql`AND d.retailer_phone = ${actor.retailerPhone}` : sql``}
          RETURNING imei1
        ), touched AS (
          UPDATE devices SET last_command = ${request.command}, last_command_at = now()
          WHERE imei1 IN (SELECT imei1 FROM added)
        )
        SELECT count(*)::int AS n FROM added`.execute(trx);
      const total = Number(inserted.rows[0]?.n ?? 0);
      await trx
        .updateTable('batches')
        .set({
          total,
          valid: total,
          found: total,
          processed: total,
          status: 'complete',
          completed_at: sql<Date>`now()` as unknown as Date,
        })
        .where('id', '=', batch.id)
        .execute();
      await appendAudit(trx, {
        actor: actor ?? { label: 'system' },
        action: `command.${request.command}`,
        target: 'ALL',
        address: request.address ?? null,
        result: 'QUEUED',
        details: { batchId: batch.id, devices: total, interface: request.iface },
      });
      return { batchId: Number(batch.id), total };
    });
    this.track(this.dispatchBatch(created.batchId));
    return created;
  }

  /** Sends every queued command of a batch to the devices that are online, all at once. */
  async dispatchBatch(batchId: number): Promise<number> {
    if (!this.gateway?.connected) return 0;
    return this.publishClaimed(await claimBatchForDispatch(this.options.db, batchId));
  }

  /** Sends the pending commands of many devices (those online), in one claim. */
  async dispatchMany(imeis: readonly string[], resendAll = false): Promise<number> {
    if (!this.gateway?.connected || imeis.length === 0) return 0;
    const claimed = await claimForDispatchMany(
      this.options.db,
      imeis,
      resendAll ? 0 : this.options.resendAfterMs,
      resendAll,
    );
    return this.publishClaimed(claimed);
  }

  /**
   * Publishes commands already marked SENT (oldest first; one connection keeps each device's order) and
   * puts those the broker did not accept back to QUEUED, to be sent when it is reachable again.
   */
  async publishClaimed(claimed: readonly ClaimedDeviceCommand[]): Promise<number> {
    if (claimed.length === 0) return 0;
    const gateway = this.gateway;
    const results = await Promise.allSettled(
      claimed.map((c) =>
        gateway
          ? gateway.publish(c.imei1, {
              id: c.transaction_id,
              command: c.command,
              options: c.options ?? {},
              issuedAt: new Date(c.created_at).toISOString(),
            })
          : Promise.reject(new Error('no device channel')),
      ),
    );
    const failed = claimed.filter((_, i) => results[i]?.status === 'rejected').map((c) => c.id);
    if (failed.length > 0) {
      await unclaim(this.options.db, failed);
      this.options.log.warn({ commands: failed.length }, 'commands stay queued: broker did not accept them');
    }
    return claimed.length - failed.length;
  }

  /** Sends the pending commands of one device, if it is online and the broker is reachable. */
  async dispatch(imei1: string, resendAll = false): Promise<number> {
    const gateway = this.gateway;
    if (!gateway?.connected) return 0;
    const claimed = await claimForDispatch(
      this.options.db,
      imei1,
      resendAll ? 0 : this.options.resendAfterMs,
      resendAll,
    );
    let sent = 0;
    for (const [index, command] of claimed.entries()) {
      try {
        await gateway.publish(imei1, {
          id: command.transaction_id,
          command: command.command,
          options: command.options ?? {},
          issuedAt: new Date(command.created_at).toISOString(),
        });
        sent += 1;
      } catch (error) {
        // Not accepted by the broker: back to QUEUED, to be sent when it is reachable again.
        await unclaim(
          this.options.db,
          claimed.slice(index).map((c) => c.id),
        );
        this.options.log.warn({ err: error, imei1 }, 'commands stay queued: broker did not accept them');
        break;
      }
    }
    return sent;
  }

  /** One pass of housekeeping: expire old one-shots, send what waits for online devices. */
  async sweep(limit = 500): Promise<void> {
    await expireCommands(this.options.db);
    if (!this.gateway?.connected) return;
    await this.dispatchMany(await devicesWithWork(this.options.db, this.options.resendAfterMs, limit));
  }

  // ---- What devices say (acknowledgements, state, online status) ----
  //
  // Messages are queued and applied in arrival order, several at a time: each flush is one transaction of
  // a few set-based statements, however many messages it holds (a batch of 100,000 commands brings
  // 200,000 of them). The promise of each message settles when its flush has committed, at most
  // INBOX_GATHER_MS after it arrived when the server is not busy.

  handleAck(imei: string, ack: AckMessage): Promise<void> {
    return this.enqueue({ kind: 'ack', imei, ack });
  }

  handleStatus(imei: string, online: boolean): Promise<void> {
    return this.enqueue({ kind: 'status', imei, online });
  }

  /**
   * A device reports what it enforces. Where that differs from the desired state and nothing is on its
   * way to fix it (e.g. a formatted phone registering again), the server issues the command that does.
   */
  handleState(imei: string, message: StateMessage): Promise<void> {
    return this.enqueue({ kind: 'state', imei, message });
  }

  private enqueue(message: DeviceMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      this.inbox.push({ message, resolve, reject });
      if (!this.flushing) {
        // The first message waits a moment for others: a flush costs a handful of statements whether
        // it carries one message or thousands. Under load the flushes follow each other without a pause.
        this.flushing = true;
        this.track(
          new Promise<void>((started) => setTimeout(started, INBOX_GATHER_MS)).then(() => this.drainInbox()),
        );
      }
    });
  }

  private async drainInbox(): Promise<void> {
    try {
      while (this.inbox.length > 0) {
        const queued = this.inbox.splice(0, INBOX_FLUSH_MAX);
        try {
          await this.flush(queued.map((q) => q.message));
          for (const q of queued) q.resolve();
        } catch (error) {
          // One bad message must not cost the others: apply them one by one.
          this.options.log.warn(
            { err: error, messages: queued.length },
            'device messages: applying one by one',
          );
          for (const q of queued) {
            await this.applyOne(q.message).then(q.resolve, q.reject);
          }
        }
      }
    } finally {
      this.flushing = false;
    }
  }

  /** Applies device messages in one transaction, then sends what waits for the devices that came online. */
  private async flush(messages: readonly DeviceMessage[]): Promise<void> {
    const online = new Map<string, boolean>();
    const acks = new Map<string, AckEntry>();
    const reported = new Map<string, ReportedEntry>();
    const stated = new Set<string>();
    for (const m of messages) {
      if (m.kind === 'status') {
        online.set(m.imei, m.online);
      } else if (m.kind === 'ack') {
        const key = `${m.imei}|${m.ack.id}`;
        const seen = acks.get(key);
        // A command's first final word stands (later ones change nothing); DELIVERED only until then.
        if (!seen || (seen.status === 'DELIVERED' && m.ack.status !== 'DELIVERED')) {
          acks.set(key, { imei1: m.imei, id: m.ack.id, status: m.ack.status, result: m.ack.result ?? null });
        }
        if (m.ack.state) {
          reported.set(m.imei, { state: m.ack.state, appversion: reported.get(m.imei)?.appversion ?? null });
        }
      } else {
        reported.set(m.imei, {
          state: m.message.state,
          appversion: m.message.appversion ?? reported.get(m.imei)?.appversion ?? null,
        });
        stated.add(m.imei);
      }
    }
    const wanted = await inTransaction(this.options.db, async (trx) => {
      // Devices first, in IMEI order, as batch chunks and single commands take them: no deadlock.
      await lockDevices(trx, [
        ...online.keys(),
        ...[...acks.values()].map((a) => a.imei1),
        ...reported.keys(),
      ]);
      await setOnlineMany(trx, online);
      const changed = await applyAcks(trx, [...acks.values()]);
      for (const command of changed) await this.afterFinalAck(trx, command);
      // Read after the acks' consequences, so that a failed command's device is compared with what is
      // wanted of it now.
      return setReportedStates(trx, reported, stated, INITIAL_DEVICE_STATE);
    });
    // Committed: what follows must not send the flush down the one-by-one path again.
    const cameOnline = [...online].filter(([, isOnline]) => isOnline).map(([imei]) => imei);
    await this.dispatchMany(cameOnline, true).catch((error: unknown) =>
      this.options.log.error({ err: error }, 'dispatch to devices back online failed'),
    );
    await this.reconcile(wanted).catch((error: unknown) =>
      this.options.log.error({ err: error }, 'reconcile of reported states failed'),
    );
  }

  /** What a final acknowledgement implies beyond the command's own row. */
  private async afterFinalAck(trx: Transaction<DB>, command: AckedCommand): Promise<void> {
    // A failed command no longer sets the desired state (else the reconcile would retry it forever).
    if (command.status === 'FAILED') await this.recomputeDesired(trx, command.imei1, command.command);
    if (command.status === 'EXECUTED' && command.command === 'RELEASE') {
      const device = await findDevice(trx, command.imei1);
      await trx
        .updateTable('devices')
        .set({ claimstatus: 'RELEASED' })
        .where('imei1', '=', command.imei1)
        .execute();
      await trx
        .insertInto('releases')
        .values({
          imei1: command.imei1,
          imei2: device?.imei2 ?? null,
          released_by: command.user_label,
          transaction_id: command.transaction_id,
        })
        .execute();
    }
  }

  /** Issues the commands that bring reported states to the desired ones, where nothing pending will. */
  private async reconcile(
    devices: readonly Pick<DeviceRow, 'imei1' | 'claimstatus' | 'desired_state' | 'reported_state'>[],
  ): Promise<void> {
    const fixes: { imei: string; key: keyof DeviceState; value: DeviceState[keyof DeviceState] }[] = [];
    for (const device of devices) {
      if (device.claimstatus !== 'ENROLLED' || !device.reported_state) continue;
      const desired = desiredOf(device);
      // A release on its way lifts every restriction: nothing else is sent to that device meanwhile.
      if (desired.released) continue;
      const state = device.reported_state;
      for (const key of Object.keys(desired) as (keyof DeviceState)[]) {
        if (desired[key] !== state[key]) fixes.push({ imei: device.imei1, key, value: desired[key] });
      }
    }
    if (fixes.length === 0) return;
    const pending = await pendingKeysMany(this.options.db, [...new Set(fixes.map((f) => f.imei))]);
    for (const { imei, key, value } of fixes) {
      const fix = commandForState(key, value);
      if (!fix || pending.has(`${imei}|${key}`)) continue;
      await this.issue({
        imei,
        command: fix.command,
        options: fix.options,
        iface: 'S',
        actor: null,
        priority: 1,
      }).catch((error: unknown) => this.options.log.warn({ err: error, imei }, 'reconcile: command refused'));
    }
  }

  /** One message on its own (the fallback when a flush fails). */
  private async applyOne(message: DeviceMessage): Promise<void> {
    const { db } = this.options;
    if (message.kind === 'status') {
      await setOnline(db, message.imei, message.online);
      if (message.online) await this.dispatch(message.imei, true);
      return;
    }
    if (message.kind === 'ack') {
      const { imei, ack } = message;
      await inTransaction(db, async (trx) => {
        const changed = await applyAck(trx, imei, ack);
        if (ack.state) await setReportedState(trx, imei, ack.state);
        if (changed) await this.afterFinalAck(trx, { ...changed, imei1: imei });
      });
      return;
    }
    const { imei, message: report } = message;
    await setReportedState(db, imei, report.state, report.appversion);
    const device = await findDevice(db, imei);
    if (device) await this.reconcile([{ ...device, reported_state: report.state }]);
  }

  /**
   * Cancels a command not yet sent, for a principal with authority over it (authz/authority.ts): the
   * permission of the command's screen, and a level at least the issuer's. Every attempt on a command the
   * caller can see is audited, refused or not, with who issued it.
   */
  async cancel(transactionId: string, actor: Principal, address: string): Promise<void> {
    const { db } = this.options;
    const command = await findCommandWithIssuer(db, transactionId);
    if (!command) throw notFound(COMMAND_MESSAGES.noSuchCommand);
    const device = await findDevice(db, command.imei1);
    if (actor.retailerPhone && device?.retailer_phone !== actor.retailerPhone)
      throw notFound(COMMAND_MESSAGES.noSuchCommand);
    const issuer = issuerLevel(command.user_id, command.issuer_level);
    const audit = (result: string, reason?: string, into: Kysely<DB> = db) =>
      appendAudit(into, {
        actor,
        action: 'command.cancel',
        target: command.imei1,
        address,
        result,
        details: {
          transactionId,
          command: command.command,
          imei: command.imei1,
          issuer: { user: command.user_label, userId: command.user_id, keyId: command.key_id, level: issuer },
          ...(reason ? { reason } : {}),
        },
      });
    const refusal = !mayUseCommand(actor, command.command)
      ? forbidden(MESSAGES.unauthorised)
      : !mayCancelIssuedBy(actor, issuer)
        ? forbidden(COMMAND_MESSAGES.higherLevel)
        : null;
    if (refusal) {
      await audit('REFUSED', refusal.message);
      throw refusal;
    }
    const cancelled = await inTransaction(db, async (trx) => {
      const row = await cancelQueued(trx, transactionId);
      if (row) {
        await this.recomputeDesired(trx, row.imei1, row.command);
        // The cancel and its audit row commit together.
        await audit('CANCELLED', undefined, trx);
      }
      return row;
    });
    if (!cancelled) {
      await audit('ALREADY_SENT');
      throw new AppError(409, 'CONFLICT', COMMAND_MESSAGES.alreadySent);
    }
  }

  /** Re-derives the desired value of the key `command` sets, from the commands still standing on it. */
  private async recomputeDesired(trx: Transaction<DB>, imei1: string, command: RawCommand): Promise<void> {
    const key = stateKeyOf(command);
    if (!key) return;
    const device = await lockDevice(trx, imei1);
    if (!device) return;
    const standing = await latestStandingCommand(trx, imei1, key);
    const value = standing
      ? applyCommand(INITIAL_DEVICE_STATE, standing.command, standing.options ?? {})[key]
      : INITIAL_DEVICE_STATE[key];
    await trx
      .updateTable('devices')
      .set({ desired_state: JSON.stringify({ ...desiredOf(device), [key]: value }) })
      .where('imei1', '=', imei1)
      .execute();
  }

  async pending(imei: string): Promise<CommandRow[]> {
    const device = await findDevice(this.options.db, imei);
    return device ? pendingCommands(this.options.db, device.imei1) : [];
  }

  private track(promise: Promise<unknown>): void {
    const tracked = promise.catch((error: unknown) =>
      this.options.log.error({ err: error }, 'dispatch failed'),
    );
    this.inflight.add(tracked);
    void tracked.finally(() => this.inflight.delete(tracked));
  }

  /** Waits for in-flight dispatches (shutdown, tests). */
  async drain(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }
}
