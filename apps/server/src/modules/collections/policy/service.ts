/**
 * The collections policy and its versions (docs/features.md § Collections on autopilot): read by the lender's
 * users (a retailer's user sees the exclusions of its own tenant only), saved as a new version by a
 * SUPERADMIN, audited. The policy in force is the latest version, or the default (off) before the first save.
 */
import {
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  type CollectionsPolicyVersion,
  collectionsPolicySchema,
  DEFAULT_COLLECTIONS_POLICY,
  type PolicyChange,
  policyChanges,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, may, scopeFor } from '../../../authz';
import { forbidden } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { inTransaction } from '../../../db/transaction';
import type { DB } from '../../../db/types';
import { appendAudit } from '../../audit/repository';
import { devicesByEitherImei } from '../../devices/repository';
import { type Caller, iso } from '../access';
import { readControl } from '../killswitch/repository';
import { currentPolicy, insertPolicy, type PolicyVersionRow, policyVersions } from './repository';

type Db = Parameters<typeof currentPolicy>[0];

export interface PolicyInForce {
  /** 0: the default, never saved (off). */
  version: number;
  policy: CollectionsPolicy;
  changedBy: string | null;
  changedAt: Date | null;
}

/** A stored policy as the contract reads it (a row that no longer parses counts as off). */
export function policyOf(row: PolicyVersionRow): CollectionsPolicy {
  const parsed = collectionsPolicySchema.safeParse(row.policy);
  return parsed.success ? parsed.data : { ...DEFAULT_COLLECTIONS_POLICY, enabled: false };
}

/** The policy in force: the latest version, or version 0 (the default, off). */
export async function policyInForce(db: Db): Promise<PolicyInForce> {
  const row = await currentPolicy(db);
  if (!row) return { version: 0, policy: DEFAULT_COLLECTIONS_POLICY, changedBy: null, changedAt: null };
  return {
    version: row.version,
    policy: policyOf(row),
    changedBy: row.created_by,
    changedAt: new Date(row.created_at),
  };
}

export class PolicyService {
  constructor(private readonly options: { db: Kysely<DB> }) {}

  private get db() {
    return this.options.db;
  }

  async get(actor: Principal): Promise<CollectionsPolicyVersion> {
    authorize(actor, 'collections', 'view', 'policy', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    const current = await policyInForce(this.db);
    return {
      version: current.version,
      policy: await this.asSeenBy(actor, current.policy),
      changedBy: current.changedBy,
      changedAt: iso(current.changedAt),
    };
  }

  /** A new version of the policy (SUPERADMIN); the same policy again saves nothing. */
  async save(
    { actor, address }: Caller,
    policy: CollectionsPolicy,
  ): Promise<CollectionsPolicyVersion & { changed: boolean }> {
    const refusal = !may(actor, 'collections', 'steer', 'policy')
      ? COLLECTIONS_MESSAGES.policyRetailer
      : !may(actor, 'collections', 'savePolicy', 'policy')
        ? COLLECTIONS_MESSAGES.superadminOnly
        : null;
    if (refusal) {
      await appendAudit(this.db, {
        actor,
        action: 'collections.policy',
        target: 'collections:policy',
        address,
        result: 'REFUSED',
        details: { reason: refusal },
      });
      throw forbidden(refusal);
    }
    return inTransaction(this.db, async (trx) => {
      // The control row, locked: saves are numbered one after the other.
      await readControl(trx, 'update');
      const current = await policyInForce(trx);
      const changes = policyChanges(current.version === 0 ? null : current.policy, policy);
      if (current.version > 0 && changes.length === 0)
        return {
          version: current.version,
          policy: current.policy,
          changedBy: current.changedBy,
          changedAt: iso(current.changedAt),
          changed: false,
        };
      const row = await insertPolicy(trx, {
        version: current.version + 1,
        policy,
        createdBy: actor.email,
        userId: actor.userId,
      });
      await appendAudit(trx, {
        actor,
        action: 'collections.policy',
        target: 'collections:policy',
        address,
        result: `v${row.version}`,
        details: { version: row.version, changes },
      });
      return {
        version: row.version,
        policy: policyOf(row),
        changedBy: row.created_by,
        changedAt: iso(row.created_at),
        changed: true,
      };
    });
  }

  /** Every version, newest first, each with what it changed from the one before. */
  async versions(actor: Principal): Promise<(CollectionsPolicyVersion & { changes: PolicyChange[] })[]> {
    authorize(actor, 'collections', 'view', 'policy', () => forbidden(COLLECTIONS_MESSAGES.policyRetailer));
    const rows = await policyVersions(this.db, 1000);
    const seen = await Promise.all(rows.map((row) => this.asSeenBy(actor, policyOf(row))));
    return rows.map((row, index) => {
      const before = seen[index + 1];
      const policy = seen[index] as CollectionsPolicy;
      return {
        version: row.version,
        policy,
        changedBy: row.created_by,
        changedAt: iso(row.created_at),
        changes: policyChanges(before ?? null, policy),
      };
    });
  }

  /**
   * The policy as `actor` may see it: a retailer's user sees the exclusions of its own retailer and
   * devices only (another tenant's IMEIs and phones are theirs), the lender's users all of it.
   */
  private async asSeenBy(actor: Principal, policy: CollectionsPolicy): Promise<CollectionsPolicy> {
    const scope = scopeFor(actor, 'collections');
    if (scope.retailerPhone === null) return policy;
    const own = await devicesByEitherImei(this.db, policy.excludedImeis, scope);
    const ownImeis = new Set(own.flatMap((d) => [d.imei1, d.imei2]));
    return {
      ...policy,
      excludedImeis: policy.excludedImeis.filter((imei) => ownImeis.has(imei)),
      excludedRetailers: policy.excludedRetailers.filter((phone) => phone === scope.retailerPhone),
    };
  }
}
