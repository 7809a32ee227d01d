/**
 * Integrator API keys (design.md §3.4): created for oneself only, shown once, stored as a SHA-256 hash.
 * A key acts with the rights of the user who created it, so it never has more rights than its creator.
 */
import type { ApiKey, KeyStatus } from '@lendlock/contract';
import { passesEveryPermission } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import type { Principal } from '../../plugins/auth';
import { forbidden, notFound } from '../../plugins/errors';
import { appendAudit } from '../audit/repository';
import { type ActorContext, canManage } from '../users/service';
import { findKey, insertKey, type KeyListRow, listKeys, setKeyStatus } from './repository';

export const KEY_MESSAGES = {
  generated: 'Key generated successfully. Copy it now: it will not be shown again.',
  onlyOwn: 'A key can only be generated for yourself.',
  notFound: 'Key not found',
  notYours: 'You can change your own keys only.',
  statusUpdated: (status: KeyStatus) =>
    `Key ${status === 'active' ? 'activated' : 'deactivated'} successfully`,
} as const;

/** Prefix that makes a leaked key recognisable by secret scanners. */
export const KEY_PREFIX = 'llk_';

export function toApiKey(row: KeyListRow): ApiKey {
  return {
    id: row.id,
    key_name: row.key_name,
    status: row.status,
    created_at: new Date(row.created_at).toISOString(),
    user_id: row.user_id,
    owner_email: row.owner_email,
    last_used_at: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
  };
}

/** ADMIN and SUPERADMIN see every key; others their own. */
export async function viewKeys(db: Kysely<DB>, actor: Principal): Promise<ApiKey[]> {
  const rows = await listKeys(db, passesEveryPermission(actor.userlevel) ? undefined : actor.userId);
  return rows.map(toApiKey);
}

export async function generateKey(
  db: Kysely<DB>,
  { actor, address }: ActorContext,
  input: { keyName: string; userId?: number | undefined },
): Promise<{ id: number; key: string }> {
  if (input.userId !== undefined && input.userId !== actor.userId) throw forbidden(KEY_MESSAGES.onlyOwn);
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

export async function updateKeyStatus(
  db: Kysely<DB>,
  { actor, address }: ActorContext,
  input: { keyId: number; status: KeyStatus },
): Promise<void> {
  await inTransaction(db, async (trx) => {
    const key = await findKey(trx, input.keyId);
    if (!key) throw notFound(KEY_MESSAGES.notFound);
    if (key.user_id !== actor.userId && !canManage(actor, key.owner_level))
      throw forbidden(KEY_MESSAGES.notYours);
    await setKeyStatus(trx, key.id, input.status);
    await appendAudit(trx, {
      actor,
      action: 'key.status',
      target: `key:${key.id}`,
      address,
      result: 'success',
      details: { from: key.status, to: input.status, owner: key.owner_email },
    });
  });
}
