/**
 * Per-device holds (docs/features.md § Collections on autopilot): a held device gets no automated action. Set
 * and removed by the lender's or the device's retailer's ADMINs (another retailer's device is not found),
 * audited; listed within the caller's tenant.
 */
import { COLLECTIONS_MESSAGES, type Hold } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, scopeFor } from '../../../authz';
import { notFound } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { inTransaction } from '../../../db/transaction';
import type { DB } from '../../../db/types';
import { appendAudit } from '../../audit/repository';
import { findDevice } from '../../devices/repository';
import { type Caller, readableDevice } from '../access';
import { deleteHold, type HoldRow, listHolds, upsertHold } from './repository';

function holdView(row: HoldRow): Hold {
  return {
    imei: row.imei1,
    reason: row.reason,
    heldBy: row.held_by,
    heldAt: new Date(row.held_at).toISOString(),
    retailerPhone: row.retailer_phone,
  };
}

export class HoldService {
  constructor(private readonly options: { db: Kysely<DB> }) {}

  private get db() {
    return this.options.db;
  }

  /** A device the caller may hold (either IMEI), or 404: another retailer's device is not revealed. */
  private async deviceFor(actor: Principal, imei: string) {
    const device = await findDevice(this.db, imei);
    const unknown = () => notFound(COLLECTIONS_MESSAGES.deviceNotFound);
    if (!device) throw unknown();
    authorize(actor, 'collections', 'hold', { retailerPhone: device.retailer_phone }, unknown);
    return device;
  }

  async list(actor: Principal, imei?: string): Promise<Hold[]> {
    const scope = scopeFor(actor, 'collections');
    if (imei !== undefined) {
      const device = await readableDevice(this.db, actor, imei);
      if (!device) return [];
      const rows = await listHolds(this.db, scope);
      return rows.filter((row) => row.imei1 === device.imei1).map(holdView);
    }
    return (await listHolds(this.db, scope)).map(holdView);
  }

  async hold({ actor, address }: Caller, imei: string, reason: string): Promise<Hold> {
    const device = await this.deviceFor(actor, imei);
    const row = await inTransaction(this.db, async (trx) => {
      const hold = await upsertHold(trx, {
        imei1: device.imei1,
        reason,
        heldBy: actor.email,
        userId: actor.userId,
      });
      await appendAudit(trx, {
        actor,
        action: 'collections.hold',
        target: device.imei1,
        address,
        result: 'HELD',
        details: { reason },
      });
      return hold;
    });
    return holdView({ ...row, retailer_phone: device.retailer_phone });
  }

  async unhold({ actor, address }: Caller, imei: string): Promise<void> {
    const device = await this.deviceFor(actor, imei);
    await inTransaction(this.db, async (trx) => {
      const removed = await deleteHold(trx, device.imei1);
      if (!removed) throw notFound(COLLECTIONS_MESSAGES.holdNotFound);
      await appendAudit(trx, {
        actor,
        action: 'collections.hold',
        target: device.imei1,
        address,
        result: 'RELEASED',
        details: { reason: removed.reason, heldBy: removed.held_by },
      });
    });
  }
}
