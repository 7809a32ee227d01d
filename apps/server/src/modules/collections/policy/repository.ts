/** The policy's versions (`collection_policies`, a row per version). */
import type { CollectionsPolicy } from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import type { DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

export interface PolicyVersionRow {
  version: number;
  policy: unknown;
  created_by: string;
  created_at: Date;
}

export async function currentPolicy(db: Db): Promise<PolicyVersionRow | undefined> {
  return db
    .selectFrom('collection_policies')
    .select(['version', 'policy', 'created_by', 'created_at'])
    .orderBy('version', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function policyVersions(db: Db, limit: number): Promise<PolicyVersionRow[]> {
  return db
    .selectFrom('collection_policies')
    .select(['version', 'policy', 'created_by', 'created_at'])
    .orderBy('version', 'desc')
    .limit(limit)
    .execute();
}

export async function insertPolicy(
  trx: Transaction<DB>,
  row: { version: number; policy: CollectionsPolicy; createdBy: string; userId: number | null },
): Promise<PolicyVersionRow> {
  return trx
    .insertInto('collection_policies')
    .values({
      version: row.version,
      policy: JSON.stringify(row.policy),
      created_by: row.createdBy,
      created_by_user_id: row.userId,
    })
    .returning(['version', 'policy', 'created_by', 'created_at'])
    .executeTakeFirstOrThrow();
}
