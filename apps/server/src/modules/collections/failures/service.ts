/**
 * A device's failed automated actions (Device Details): its LOCK, UNLOCK and RELEASE retrying or given up
 * by the retry pass (engine.ts), for a caller who may read the device.
 */
import { COLLECTIONS_RETRY, type FailedAction } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import type { Principal } from '../../../core/principal';
import type { DB } from '../../../db/types';
import { iso, readableDevice } from '../access';
import { deviceFailures } from './repository';

export class FailureService {
  constructor(private readonly options: { db: Kysely<DB> }) {}

  private get db() {
    return this.options.db;
  }

  /** A device's automated actions retrying or given up; another retailer's device: none. */
  async ofDevice(actor: Principal, imei: string): Promise<FailedAction[]> {
    const device = await readableDevice(this.db, actor, imei);
    if (!device) return [];
    return (await deviceFailures(this.db, device.imei1, 50)).map((row) => ({
      id: row.id,
      imei: row.imei1,
      loanRef: row.loan_ref,
      action: row.kind,
      rule: row.rule,
      actionDate: row.action_date,
      state: row.state,
      attempts: Number(row.attempts),
      maxAttempts: COLLECTIONS_RETRY.maxAttempts,
      retryAt: iso(row.retry_at),
      result: row.note ?? row.command_result,
      transactionId: row.transaction_id,
    }));
  }
}
