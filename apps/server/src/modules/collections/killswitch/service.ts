/**
 * The kill switch (docs/features.md § Collections on autopilot): any ADMIN or SUPERADMIN of the lender stops
 * collections, only a SUPERADMIN resumes; every attempt is audited, refused or not.
 */
import { COLLECTIONS_MESSAGES, type KillSwitch } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, may } from '../../../authz';
import { AppError, forbidden } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { inTransaction } from '../../../db/transaction';
import type { DB } from '../../../db/types';
import { appendAudit } from '../../audit/repository';
import { recomputeDesired } from '../../commands/desired';
import { commandEvents, type EventSink } from '../../webhooks/events';
import { type Caller, iso } from '../access';
import { stopRunningRuns } from '../runs/repository';
import { cancelQueuedCollections, readControl, setKillSwitch } from './repository';

export interface KillSwitchServiceOptions {
  db: Kysely<DB>;
  events: EventSink;
}

export class KillSwitchService {
  constructor(private readonly options: KillSwitchServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  async get(actor: Principal): Promise<KillSwitch> {
    authorize(actor, 'collections', 'view', 'killSwitch', () =>
      forbidden(COLLECTIONS_MESSAGES.killSwitchRetailer),
    );
    const control = await readControl(this.db);
    return {
      on: control.kill_switch,
      reason: control.kill_reason,
      changedBy: control.kill_changed_by,
      changedAt: iso(control.kill_changed_at),
    };
  }

  /**
   * Turns the kill switch on (any ADMIN or SUPERADMIN of the lender: stopping is always allowed) or off
   * (SUPERADMIN only). On: the running daily run stops after its chunk under way, and every automated
   * reminder and lock still QUEUED is cancelled ('collections stopped'), with its webhook event; a queued
   * unlock or release (relief) stays queued.
   */
  async set(
    { actor, address }: Caller,
    request: { on: boolean; reason: string },
  ): Promise<KillSwitch & { cancelled: number; message: string }> {
    const refusal = !may(actor, 'collections', 'steer', 'killSwitch')
      ? COLLECTIONS_MESSAGES.killSwitchRetailer
      : !request.on && !may(actor, 'collections', 'resume', 'killSwitch')
        ? COLLECTIONS_MESSAGES.killSwitchOffSuperadmin
        : null;
    if (refusal) {
      await appendAudit(this.db, {
        actor,
        action: 'collections.killswitch',
        target: 'collections:killswitch',
        address,
        result: 'REFUSED',
        details: { on: request.on, reason: request.reason, refusal },
      });
      throw forbidden(refusal);
    }
    const { events } = this.options;
    const result = await inTransaction(this.db, async (trx) => {
      const before = await readControl(trx, 'update');
      if (before.kill_switch === request.on)
        throw new AppError(409, 'CONFLICT', COLLECTIONS_MESSAGES.killSwitchSame(request.on));
      const control = await setKillSwitch(trx, {
        on: request.on,
        reason: request.reason,
        changedBy: actor.email,
      });
      let cancelled = 0;
      if (request.on) {
        await stopRunningRuns(trx, 'stopped by the kill switch');
        const rows = await cancelQueuedCollections(trx, COLLECTIONS_MESSAGES.stopped);
        cancelled = rows.length;
        for (const row of rows)
          if (row.command !== 'NOTIFY') await recomputeDesired(trx, row.imei1, row.command as 'LOCK');
        await events.emit(trx, commandEvents(rows));
      }
      await appendAudit(trx, {
        actor,
        action: 'collections.killswitch',
        target: 'collections:killswitch',
        address,
        result: request.on ? 'ON' : 'OFF',
        details: { on: request.on, reason: request.reason, cancelled },
      });
      return { control, cancelled };
    });
    if (result.cancelled > 0) events.wake();
    return {
      on: result.control.kill_switch,
      reason: result.control.kill_reason,
      changedBy: result.control.kill_changed_by,
      changedAt: iso(result.control.kill_changed_at),
      cancelled: result.cancelled,
      message: request.on ? COLLECTIONS_MESSAGES.killSwitchOn : COLLECTIONS_MESSAGES.killSwitchOff,
    };
  }
}
