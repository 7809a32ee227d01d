/**
 * Integrator API keys: created for oneself only, with the password typed again, shown
 * once, stored as a SHA-256 hash. A key acts with the rights of the user who created it, so it never has
 * more rights than its creator, and it follows its owner's account: a password reset or a
 * disable switches the owner's keys off, and a key switched off by a higher level, or with the account,
 * cannot be switched on again by a lower one (its owner included). Who sees and switches which key
 * (tenant and level) is the authority module's to say (authz/resources/keys.ts); another tenant's key
 * answers as an unknown one.
 */
import {
  type ApiKey,
  KEY_MESSAGES,
  type KeyDeactivationReason,
  type KeyStatus,
  type UserLevel,
} from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import { authorize, scopeFor } from '../../authz';
import { accountDeactivationLevel, raisesDeactivation } from '../../authz/resources/keys';
import { AppError, forbidden, notFound } from '../../core/errors';
import type { ActorContext, Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import { BATCH_PAUSE_REASONS, pauseBatchesOf } from '../batches/service';
import { confirmPassword } from '../sessions/reauth';
import type { ThrottleSettings } from '../sessions/signIn';
import {
  activateKey,
  type Deactivation,
  deactivateKeys,
  insertKey,
  type KeyListRow,
  listKeys,
  lockKey,
  lockKeysOf,
} from './repository';

/** Prefix that makes a leaked key recognisable by secret scanners. */
export const KEY_PREFIX = 'llk_';

/** A key as the authority module judges it: by its owner. */
function keyObject(key: KeyListRow) {
  return {
    owner: { id: key.user_id, userlevel: key.owner_level, retailerPhone: key.owner_retailer_phone },
  };
}

export function toApiKey(row: KeyListRow): ApiKey {
  const inactive = row.status === 'inactive';
  return {
    id: row.id,
    key_name: row.key_name,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    user_id: row.user_id,
    owner_email: row.owner_email,
    last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    deactivated_at: inactive && row.deactivated_at ? new Date(row.deactivated_at).toISOString() : null,
    deactivated_by: inactive ? row.deactivated_by_email : null,
    deactivated_by_level: inactive ? row.deactivated_by_level : null,
    deactivated_reason: inactive ? row.deactivated_reason : null,
  };
}

/** Key Management: the integrator keys a principal may list, generate and switch. */
export class KeyService {
  private readonly db: Kysely<DB>;
  private readonly throttle: ThrottleSettings;

  /** `throttle`: the sign-in's limits, which the password typed again to generate a key counts under. */
  constructor(deps: { db: Kysely<DB>; throttle: ThrottleSettings }) {
    this.db = deps.db;
    this.throttle = deps.throttle;
  }

  /** The keys `actor` may list (authz/resources/keys.ts `scope`: its tenant's, by level). */
  async viewKeys(actor: Principal): Promise<ApiKey[]> {
    return (await listKeys(this.db, scopeFor(actor, 'keys'))).map(toApiKey);
  }

  async generateKey(
    { actor, address }: ActorContext,
    input: { keyName: string; password: string; userId?: number | undefined },
  ): Promise<{ id: number; key: string }> {
    const { db } = this;
    authorize(actor, 'keys', 'create', { owner: { id: input.userId ?? actor.userId } }, () =>
      forbidden(KEY_MESSAGES.onlyOwn),
    );
    if (
      !(await confirmPassword(db, this.throttle, { actor, address, action: 'key.generate' }, input.password))
    ) {
      throw new AppError(401, 'INVALID_CREDENTIALS', KEY_MESSAGES.wrongPassword);
    }
    const key = `${KEY_PREFIX}${randomSecret(32)}`;
    const id = await insertKey(db, { name: input.keyName, hash: sha256Hex(key), userId: actor.userId });
    await appendAudit(db, {
      actor,
      action: 'key.generate',
      target: `key:${id}`,
      address,
      result: 'success',
      details: { keyName: input.keyName },
    });
    return { id, key };
  }

  async updateKeyStatus(
    { actor, address }: ActorContext,
    input: { keyId: number; status: KeyStatus },
  ): Promise<void> {
    await inTransaction(this.db, async (trx) => {
      const key = await lockKey(trx, input.keyId);
      if (!key) throw notFound(KEY_MESSAGES.notFound);
      authorize(actor, 'keys', 'read', keyObject(key), () => notFound(KEY_MESSAGES.notFound));
      authorize(actor, 'keys', 'manage', keyObject(key), () => forbidden(KEY_MESSAGES.notYours));
      if (input.status === 'inactive') {
        const deactivation = { by: actor.userId, level: actor.userlevel, reason: 'manual' } as const;
        // Already off at a higher level: it stays off as recorded; the request is answered as done.
        const changed = await switchOff(trx, [key], deactivation, { actor, address });
        if (changed.length === 0) await auditUnchanged(trx, actor, address, key);
        return;
      }
      if (key.status === 'inactive') {
        const needed = key.deactivated_by_level === 'SUPERADMIN' ? 'SUPERADMIN' : 'ADMIN';
        authorize(actor, 'keys', 'reactivate', { deactivatedByLevel: key.deactivated_by_level }, () =>
          forbidden(KEY_MESSAGES.reactivationNeeds(needed)),
        );
      }
      await activateKey(trx, key.id);
      await appendAudit(trx, {
        actor,
        action: 'key.status',
        target: `key:${key.id}`,
        address,
        result: 'success',
        details: { from: key.status, to: 'active', owner: key.owner_email },
      });
    });
  }
}

/**
 * Pauses the batches started with these keys (`pauseBatchesOf`, modules/batches): every key
 * deactivation, by hand or with the account, goes through here, inside its transaction.
 */
async function pauseBatchesOfKeys(
  trx: Transaction<DB>,
  keyIds: readonly number[],
  actor: Principal | null,
): Promise<void> {
  for (const keyId of keyIds) await pauseBatchesOf(trx, { keyId }, BATCH_PAUSE_REASONS.keyDeactivated, actor);
}

/** Switches keys off inside `trx` and audits each with its reason; returns the ids changed. */
async function switchOff(
  trx: Transaction<DB>,
  keys: readonly KeyListRow[],
  deactivation: Deactivation,
  audit: { actor: Principal | null; address: string | null },
): Promise<number[]> {
  // Never lower what is recorded: a key already off at a higher level stays as it is.
  const changed = keys.filter(
    (key) => key.status === 'active' || raisesDeactivation(key.deactivated_by_level, deactivation.level),
  );
  const ids = changed.map((key) => key.id);
  await deactivateKeys(trx, ids, deactivation);
  for (const key of changed) {
    await appendAudit(trx, {
      actor: audit.actor,
      action: 'key.status',
      target: `key:${key.id}`,
      address: audit.address,
      result: 'success',
      details: {
        from: key.status,
        to: 'inactive',
        owner: key.owner_email,
        reason: deactivation.reason,
        level: deactivation.level,
      },
    });
  }
  await pauseBatchesOfKeys(trx, ids, audit.actor);
  return ids;
}

/**
 * Switches off every key of `owner` with the account (a password reset, a disable, a forced logout that
 * asked for it), audited with the reason. `actor` is who did it; null for the system (a password reset).
 * Call it inside the transaction that changes the account. Returns the ids of the keys changed.
 */
export async function deactivateKeysOf(
  trx: Transaction<DB>,
  owner: { id: number; userlevel: UserLevel },
  reason: Exclude<KeyDeactivationReason, 'manual'>,
  { actor, address }: { actor: Principal | null; address: string | null },
): Promise<number[]> {
  const keys = await lockKeysOf(trx, owner.id);
  const level = accountDeactivationLevel(owner.userlevel, actor?.userlevel ?? null);
  return switchOff(trx, keys, { by: actor?.userId ?? null, level, reason }, { actor, address });
}

/** A deactivation of a key already off at a higher level still leaves its trace. */
async function auditUnchanged(trx: Transaction<DB>, actor: Principal, address: string, key: KeyListRow) {
  await appendAudit(trx, {
    actor,
    action: 'key.status',
    target: `key:${key.id}`,
    address,
    result: 'unchanged',
    details: { from: key.status, to: 'inactive', owner: key.owner_email, level: key.deactivated_by_level },
  });
}
