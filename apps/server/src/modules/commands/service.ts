/**
 * The command service, a thin facade over the seams that do the work:
 *
 * - issue.ts: the rules, in one set-based implementation that every path uses (single, API, batch
 *   chunk, device action ALL, reconcile); this file groups the single commands that arrive together;
 * - dispatch.ts: what is recorded reaches the devices (publish after commit, claims, resend, sweep);
 * - cancel.ts: cancelling a command not yet sent;
 * - desired.ts: the desired state of a key once a command on it is cancelled or failed;
 * - inbox.ts: what devices say (acknowledgements, state, online status) and the reconcile.
 *
 * The database is the source of truth: QUEUED → SENT (broker accepted) → DELIVERED → EXECUTED | FAILED
 * moved only by the device's own acknowledgements, or SUPERSEDED / CANCELLED / EXPIRED. Online devices get
 * their commands at once; others on reconnect.
 */
import {
  type AckMessage,
  type CommandInterface,
  type CommandOptions,
  type CommandStatus,
  commandKind,
  MESSAGES,
  type RawCommand,
  type ScreenName,
  type StateMessage,
  screensOfCommand,
} from '@lendlock/contract';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { authorize, mayIfFound, scopeFor } from '../../authz';
import type { TenantScope } from '../../authz/tenancy';
import { AppError, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { PRIORITY_BULK, PRIORITY_RECONCILE } from '../../db/priority';
import { currentTenant, withTenant } from '../../db/tenant';
import { inTransaction } from '../../db/transaction';
import type { CommandRow, DB } from '../../db/types';
import type { Gateway } from '../channel/gateway';
import { findDevice } from '../devices/repository';
import { type EventSink, NO_EVENTS } from '../webhooks/events';
import { cancelCommand } from './cancel';
import { Dispatcher, type Publishable } from './dispatch';
import { DeviceInbox, type ReconcileCommand } from './inbox';
import { type CommandOutcome, type CommandRequest, type Refusal, recordCommandSet } from './issue';
import { COMMAND_MESSAGES } from './messages';
import { findCommandWithIssuer, pendingCommands } from './repository';

export { COMMAND_MESSAGES } from './messages';

export interface IssueRequest {
  imei: string;
  command: RawCommand;
  options?: CommandOptions;
  iface: CommandInterface;
  /** The authenticated principal; null for the system (reconcile). */
  actor: Principal | null;
  batchId?: number | null;
  /** commands.priority (db/priority.ts): single and API 2, reconcile 1, batch 0. */
  priority?: number;
  address?: string;
  /** Batch items are audited once per batch. */
  audit?: boolean;
  /** The screens whose permission admits it (by default those of its command; Graded Disable App: two). */
  screens?: readonly ScreenName[];
  /** The dynamic action table of a retailer's user: the retailer it names (it must be the user's own). */
  forRetailer?: string;
}

/** An issue request as decided: the devices its principal's commands may reach. */
interface ScopedRequest extends IssueRequest {
  scope: TenantScope;
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
  /** Webhook events of what commands do (default: none). */
  events?: EventSink;
}

/** Most single commands recorded in one transaction (see CommandService.issue). */
const GROUP_MAX = 200;
/** Transactions of single commands running at once. */
const GROUPS_IN_FLIGHT = 2;

interface WaitingIssue {
  request: ScopedRequest;
  /** The tenant of the request that issued it (db/tenant.ts): a group is recorded as its tenant. */
  tenant: string;
  resolve(issued: Issued): void;
  reject(error: unknown): void;
}

/**
 * A single command's refusal, as its caller hears it: why, in words. 'not registered' is an unknown IMEI,
 * or for a retailer's user also another retailer's device: that user hears the plain 'not found' for
 * both, so the other retailer's device is not revealed; anyone else reaches every device, so saying that
 * no device is registered with the IMEI reveals nothing. ('single only' cannot happen for a single
 * command.)
 */
function refusalError(refusal: Refusal | 'busy', scope: TenantScope): AppError {
  if (refusal === 'released') return new AppError(409, 'CONFLICT', COMMAND_MESSAGES.released);
  if (refusal === 'de-enrolled') return new AppError(409, 'CONFLICT', COMMAND_MESSAGES.deenrolled);
  const scoped = scope.retailerPhone !== null;
  return new AppError(404, 'NOT_FOUND', scoped ? COMMAND_MESSAGES.notFound : COMMAND_MESSAGES.notRegistered);
}

/** The system's commands (the reconcile) reach every device. */
const SYSTEM_SCOPE: TenantScope = { retailerPhone: null };

/** The request `recordCommandSet` takes for a single command. */
function commandRequestOf(request: IssueRequest, scope: TenantScope): CommandRequest {
  const actor = request.actor;
  return {
    imei: request.imei,
    command: request.command,
    options: request.options ?? {},
    iface: request.iface,
    priority: request.priority ?? PRIORITY_BULK,
    issuer: { label: actor?.email ?? 'system', userId: actor?.userId ?? null, keyId: actor?.keyId ?? null },
    retailerPhone: scope.retailerPhone,
    batchId: request.batchId ?? null,
    audit: request.audit === false ? null : { address: request.address ?? null },
  };
}

export class CommandService {
  readonly dispatcher: Dispatcher;
  private readonly inbox: DeviceInbox;
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly waiting: WaitingIssue[] = [];
  private readonly revocationListeners: ((imei1: string) => void)[] = [];
  private groupsInFlight = 0;

  private readonly events: EventSink;

  constructor(private readonly options: CommandServiceOptions) {
    this.events = options.events ?? NO_EVENTS;
    this.dispatcher = new Dispatcher({ ...options, events: this.events });
    this.inbox = new DeviceInbox({
      db: options.db,
      log: options.log,
      dispatcher: this.dispatcher,
      issue: (commands) => this.issueReconcile(commands),
      track: (promise) => this.track(promise),
      events: this.events,
    });
  }

  attach(gateway: Gateway): void {
    this.dispatcher.attach(gateway);
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
    return this.dispatcher.connected;
  }

  /**
   * Issues one command through the rules (issue.ts); sends it at once when the device is online.
   *
   * Single commands that arrive together are recorded together: while GROUPS_IN_FLIGHT transactions are
   * running, new requests wait and the next transaction takes up to GROUP_MAX of them (one lock statement,
   * one record statement and one commit for all). The rules and the outcome of each command are those of
   * a command on its own. A request whose device another transaction holds (a batch chunk, say) is issued
   * on its own instead, waiting for its device; so is one whose group failed.
   */
  async issue(request: IssueRequest): Promise<Issued> {
    const scoped = this.decide(request);
    if (this.options.db.isTransaction || commandKind(request.command) === 'server')
      return this.issueAlone(scoped);
    return new Promise<Issued>((resolve, reject) => {
      this.waiting.push({ request: scoped, tenant: currentTenant(), resolve, reject });
      this.startGroups();
    });
  }

  /**
   * A principal's command: the permission of its screen, the retailer of the dynamic action table, and
   * the devices it may reach (another tenant's device is not found). The system's reaches every device.
   */
  private decide(request: IssueRequest): ScopedRequest {
    const { actor } = request;
    if (!actor) return { ...request, scope: SYSTEM_SCOPE };
    const screens = request.screens ?? screensOfCommand(request.command);
    authorize(actor, 'commands', 'issue', { screens }, () => forbidden(MESSAGES.unauthorised));
    if (request.forRetailer !== undefined)
      authorize(actor, 'commands', 'actForRetailer', { retailerPhone: request.forRetailer }, () =>
        forbidden(COMMAND_MESSAGES.notYourRetailer),
      );
    return { ...request, scope: scopeFor(actor, 'commands') };
  }

  private startGroups(): void {
    while (this.groupsInFlight < GROUPS_IN_FLIGHT && this.waiting.length > 0) {
      // One tenant's commands per group, recorded as that tenant: the database checks them too.
      const tenant = (this.waiting[0] as WaitingIssue).tenant;
      const group: WaitingIssue[] = [];
      const rest: WaitingIssue[] = [];
      for (const w of this.waiting) (group.length < GROUP_MAX && w.tenant === tenant ? group : rest).push(w);
      this.waiting.length = 0;
      for (const w of rest) this.waiting.push(w);
      this.groupsInFlight += 1;
      void withTenant(tenant, () => this.issueGroup(group)).finally(() => {
        this.groupsInFlight -= 1;
        this.startGroups();
      });
    }
  }

  private async issueGroup(group: readonly WaitingIssue[]): Promise<void> {
    const requests = group.map((w) => commandRequestOf(w.request, w.request.scope));
    let outcomes: CommandOutcome[];
    try {
      outcomes = await inTransaction(this.options.db, (trx) =>
        recordCommandSet(trx, requests, { ...this.recordOptions(true), skipLocked: true }),
      );
    } catch (error) {
      // The group failed as a whole (a lost connection, a deadlock): each command on its own, with its own
      // outcome.
      this.options.log.warn({ err: error, commands: group.length }, 'single commands: issuing one by one');
      await Promise.all(group.map((w) => this.issueAlone(w.request).then(w.resolve, w.reject)));
      return;
    }
    this.afterCommit(outcomes, requests);
    const alone: WaitingIssue[] = [];
    for (const [index, waiting] of group.entries()) {
      const outcome = outcomes[index] as CommandOutcome;
      if (outcome.recorded)
        waiting.resolve({ transactionId: outcome.transactionId, imei1: outcome.imei1, status: 'QUEUED' });
      else if (outcome.refusal === 'busy') alone.push(waiting);
      else waiting.reject(refusalError(outcome.refusal, waiting.request.scope));
    }
    await Promise.all(alone.map((w) => this.issueAlone(w.request).then(w.resolve, w.reject)));
  }

  /** One command in a transaction of its own (or the caller's), waiting for its device. */
  private async issueAlone(request: ScopedRequest): Promise<Issued> {
    const { db } = this.options;
    // With a transaction of its own, a command for an online device is recorded as SENT and published
    // after commit; in a caller's transaction, the dispatch after commit is the caller's.
    const ownTransaction = !db.isTransaction;
    const requests = [commandRequestOf(request, request.scope)];
    const [outcome] = await inTransaction(db, (trx) =>
      recordCommandSet(trx, requests, this.recordOptions(ownTransaction)),
    );
    if (!outcome?.recorded) throw refusalError(outcome?.refusal ?? 'not registered', request.scope);
    if (ownTransaction) {
      this.afterCommit([outcome], requests);
      // A command the server carries out itself (FORMATTEDDEVICE) de-enrolled the device: its credential went.
      if (commandKind(request.command) === 'server') {
        this.credentialRevoked(outcome.imei1);
        this.events.wake();
      }
    }
    return {
      transactionId: outcome.transactionId,
      imei1: outcome.imei1,
      status: outcome.status === 'EXECUTED' ? 'EXECUTED' : 'QUEUED',
    };
  }

  /** The reconcile's commands, as the system, in one transaction: each restores a value and its cause. */
  private async issueReconcile(commands: readonly ReconcileCommand[]): Promise<void> {
    const requests = commands.map(
      (c): CommandRequest => ({
        ...commandRequestOf(
          {
            imei: c.imei,
            command: c.command.command,
            options: c.command.options,
            iface: 'S',
            actor: null,
            priority: PRIORITY_RECONCILE,
          },
          SYSTEM_SCOPE,
        ),
        restores: c.cause,
      }),
    );
    const outcomes = await inTransaction(this.options.db, (trx) =>
      recordCommandSet(trx, requests, this.recordOptions(true)),
    );
    for (const [index, outcome] of outcomes.entries()) {
      if (!outcome.recorded)
        this.options.log.warn(
          { imei: requests[index]?.imei, refusal: outcome.refusal },
          'reconcile: command refused',
        );
    }
    this.afterCommit(outcomes, requests);
  }

  /** How commands are recorded now: sent at once to online devices when the broker is reachable. */
  recordOptions(publishAfterCommit: boolean) {
    return {
      send: publishAfterCommit && this.connected,
      oneShotTtlMs: this.options.oneShotTtlMs,
      events: this.events,
    };
  }

  /** After commit: publishes the commands recorded SENT; sends the queued ones of online devices. */
  afterCommit(outcomes: readonly CommandOutcome[], requests: readonly CommandRequest[]): void {
    this.track(
      this.dispatcher.afterRecorded(outcomes, (index) => ({
        command: requests[index]?.command as RawCommand,
        options: requests[index]?.options ?? {},
      })),
    );
  }

  /** Sends the pending commands of many devices (those online), in one claim. */
  dispatchMany(imeis: readonly string[], resendAll = false): Promise<number> {
    return this.dispatcher.dispatchMany(imeis, resendAll);
  }

  /** Publishes commands already marked SENT (see Dispatcher.publishClaimed). */
  publishClaimed(claimed: readonly Publishable[]): Promise<number> {
    return this.dispatcher.publishClaimed(claimed);
  }

  /** Sends the pending commands of one device, if it is online and the broker is reachable. */
  dispatch(imei1: string, resendAll = false): Promise<number> {
    return this.dispatcher.dispatch(imei1, resendAll);
  }

  /** One pass of housekeeping: expire old one-shots, send what waits for online devices. */
  sweep(limit = 500): Promise<void> {
    return this.dispatcher.sweep(limit);
  }

  handleAck(imei: string, ack: AckMessage): Promise<void> {
    return this.inbox.handleAck(imei, ack);
  }

  handleStatus(imei: string, online: boolean): Promise<void> {
    return this.inbox.handleStatus(imei, online);
  }

  handleState(imei: string, message: StateMessage): Promise<void> {
    return this.inbox.handleState(imei, message);
  }

  /** See cancel.ts. */
  cancel(transactionId: string, actor: Principal, address: string): Promise<void> {
    return cancelCommand(this.options.db, transactionId, actor, address, this.events);
  }

  /**
   * A command's status by transaction id, for who may see it (authz/resources/commands.ts `read`);
   * anyone else hears it is unknown, exactly as for an id that names nothing.
   */
  async status(actor: Principal, transactionId: string): Promise<CommandRow> {
    const { db } = this.options;
    const command = await findCommandWithIssuer(db, transactionId);
    const device = command ? await findDevice(db, command.imei1) : undefined;
    const object = command && {
      retailerPhone: device?.retailer_phone ?? null,
      raw: command.command,
      issuer: { userId: command.user_id, level: command.issuer_level },
    };
    if (!command || !mayIfFound(actor, 'commands', 'read', object, (o) => o))
      throw notFound(COMMAND_MESSAGES.noSuchCommand);
    return command;
  }

  /** The pending commands of a device `actor` may see (none for a device it may not). */
  async pending(actor: Principal, imei: string): Promise<CommandRow[]> {
    const device = await findDevice(this.options.db, imei);
    if (!mayIfFound(actor, 'devices', 'read', device, (x) => ({ retailerPhone: x.retailer_phone })))
      return [];
    return pendingCommands(this.options.db, device.imei1);
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
