/**
 * Batches. A batch belongs to the tenant of the user who started it. It is read and
 * steered by its owner or a strictly higher level of the lender (a retailer's user, whatever its level,
 * only its own: another user's file may name any device), with the permission of its command's screen.
 * Another tenant's batch is unknown to a retailer's user. Its uploaded file follows it (uploads.ts).
 */
import type { UserLevel } from '@lendlock/contract';
import { RAW_COMMANDS } from '@lendlock/contract';
import type { Principal } from '../../core/principal';
import { mayControlBatchOf, mayUseCommand } from '../authority';
import { ISSUER_LEVELS, type IssuerLevel, issuerLevel } from '../issuer';
import { sees, type Tenant } from '../tenancy';

export interface BatchObject {
  /** Its command. */
  readonly raw: string;
  /** Who started it: a user, their current level and tenant (null user: the system, the lender's). */
  readonly owner: {
    readonly userId: number | null;
    readonly level: UserLevel | null;
    readonly retailerPhone: Tenant;
  };
}

/**
 * The batches a list may show (the rule of `read`, as a query): the reader's own, and those of owners
 * of the levels it reads ('system' for a batch without a user), of the raw commands whose screen it may
 * use.
 */
export interface BatchScope {
  readonly userId: number;
  readonly ownerLevels: readonly IssuerLevel[];
  readonly commands: readonly string[];
}

/** The permission of its command's screen (to start one, and to read one). */
const use = (p: Principal, batch: Pick<BatchObject, 'raw'>) => mayUseCommand(p, batch.raw);

/** Its tenant: another tenant's batch is unknown. */
const see = (p: Principal, batch: Pick<BatchObject, 'owner'>) => sees(p, batch.owner.retailerPhone);

const control = (p: Principal, batch: BatchObject) =>
  see(p, batch) &&
  use(p, batch) &&
  mayControlBatchOf(p, {
    userId: batch.owner.userId,
    level: issuerLevel(batch.owner.userId, batch.owner.level),
  });

export const batches = {
  scope: (p: Principal): BatchScope => ({
    userId: p.userId,
    ownerLevels: ISSUER_LEVELS.filter((level) => mayControlBatchOf(p, { userId: null, level })),
    commands: RAW_COMMANDS.filter((raw) => mayUseCommand(p, raw)),
  }),
  see,
  use,
  read: control,
  control,
};
