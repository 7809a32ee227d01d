import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types';

/** The active secret whose SHA-256 is `hash` (not revoked, not expired), marked as used now. */
export async function useSecret(db: Kysely<DB>, hash: string): Promise<{ id: number; name: string } | null> {
  const row = await db
    .updateTable('enrollment_secrets')
    .set({ last_used_at: sql<Date>`now()` })
    .where('secret_hash', '=', hash)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
    .returning(['id', 'name'])
    .executeTakeFirst();
  return row ? { id: Number(row.id), name: row.name } : null;
}

export async function insertSecret(
  db: Kysely<DB>,
  secret: { name: string; hash: string; createdBy: string; expiresAt: Date | null },
) {
  return db
    .insertInto('enrollment_secrets')
    .values({
      name: secret.name,
      secret_hash: secret.hash,
      created_by: secret.createdBy,
      expires_at: secret.expiresAt,
    })
    .returning(['id', 'name', 'created_at', 'expires_at'])
    .executeTakeFirstOrThrow();
}

export async function listSecrets(db: Kysely<DB>) {
  return db
    .selectFrom('enrollment_secrets')
    .select([
      'id',
      'name',
      'created_at',
      'created_by',
      'expires_at',
      'revoked_at',
      'revoked_by',
      'last_used_at',
    ])
    .orderBy('id', 'desc')
    .execute();
}

/** Revokes the active secret `id` or named `name`; returns its name, or null when none is active. */
export async function revokeSecret(
  db: Kysely<DB>,
  which: { id: number } | { name: string },
  by: string,
): Promise<{ id: number; name: string } | null> {
  const row = await db
    .updateTable('enrollment_secrets')
    .set({ revoked_at: sql<Date>`now()`, revoked_by: by })
    .where('revoked_at', 'is', null)
    .$if('id' in which, (q) => q.where('id', '=', (which as { id: number }).id))
    .$if('name' in which, (q) => q.where('name', '=', (which as { name: string }).name))
    .returning(['id', 'name'])
    .executeTakeFirst();
  return row ? { id: Number(row.id), name: row.name } : null;
}
