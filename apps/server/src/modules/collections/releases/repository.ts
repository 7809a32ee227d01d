/** The release approval queue: the RELEASE actions of `collection_actions`, and their decisions. */
import type { ReleaseState } from '@lendlock/contract';
import { type Kysely, sql, type Transaction } from 'kysely';
import type { TenantScope } from '../../../authz/tenancy';
import type { CollectionActionState, DB } from '../../../db/types';

type Db = Kysely<DB> | Transaction<DB>;

/**
 * A release action's state as the API names it (contract `RELEASE_STATES`), from its row: the ONE mapping,
 * read by the lists' filter and by every view. Approved: issued (or retried, or failed on the device)
 * after an operator's decision; refused: approved, but the pipeline refused the command. An automatic
 * release (no decision) is none of these: NULL, never listed.
 */
const releaseStateSql = sql<ReleaseState | null>`CASE
    WHEN a.state = 'AWAITING_APPROVAL' THEN 'AWAITING_APPROVAL'
    WHEN a.state = 'REJECTED' THEN 'REJECTED'
    WHEN a.decided_by IS NULL THEN NULL
    WHEN a.state = 'REFUSED' THEN 'REFUSED'
    WHEN a.state IN ('ISSUED', 'RETRYING', 'FAILED') THEN 'APPROVED' END`;

export interface ReleaseRow {
  id: number;
  loan_id: number;
  loan_ref: string;
  imei1: string;
  customer_name: string;
  retailer_phone: string | null;
  paid_at: Date | null;
  created_at: Date;
  /** The row's own state (collection_actions.state). */
  state: CollectionActionState;
  /** The state the API shows (`releaseStateSql`). */
  release_state: ReleaseState | null;
  decided_by: string | null;
  decided_at: Date | null;
  transaction_id: string | null;
  rule: string;
  version: number;
}

function releaseQuery(db: Db) {
  return db
    .selectFrom('collection_actions as a')
    .innerJoin('loans as l', 'l.id', 'a.loan_id')
    .leftJoin('devices as d', 'd.imei1', 'a.imei1')
    .select([
      'a.id',
      'a.loan_id',
      'l.loan_ref',
      'a.imei1',
      'l.customer_name',
      'd.retailer_phone',
      sql<Date | null>`(SELECT max(i.paid_at) FROM loan_instalments i WHERE i.loan_id = a.loan_id)`.as(
        'paid_at',
      ),
      'a.created_at',
      'a.state',
      releaseStateSql.as('release_state'),
      'a.decided_by',
      'a.decided_at',
      'a.transaction_id',
      'a.rule',
      'a.version',
    ])
    .where('a.kind', '=', 'RELEASE');
}

/** Releases in an API state (`releaseStateSql`), newest first, at most 500. */
export async function listReleases(
  db: Db,
  state: ReleaseState,
  { retailerPhone }: TenantScope,
  imei1: string | null = null,
): Promise<ReleaseRow[]> {
  let query = releaseQuery(db).orderBy('a.id', 'desc').limit(500);
  if (imei1 !== null) query = query.where('a.imei1', '=', imei1);
  // The queue's own index (collection_actions_awaiting) for the default list.
  if (state === 'AWAITING_APPROVAL') query = query.where('a.state', '=', 'AWAITING_APPROVAL');
  else query = query.where(releaseStateSql, '=', state);
  if (retailerPhone !== null) query = query.where('d.retailer_phone', '=', retailerPhone);
  return query.execute() as Promise<ReleaseRow[]>;
}

/** One release action by id (whatever its state), or undefined. */
export async function findRelease(db: Db, id: number): Promise<ReleaseRow | undefined> {
  return releaseQuery(db).where('a.id', '=', id).executeTakeFirst() as Promise<ReleaseRow | undefined>;
}

/** A release action, locked for its decision. */
export async function lockRelease(trx: Transaction<DB>, id: number): Promise<ReleaseRow | undefined> {
  const locked = await trx
    .selectFrom('collection_actions')
    .select('id')
    .where('id', '=', id)
    .where('kind', '=', 'RELEASE')
    .forUpdate()
    .executeTakeFirst();
  if (!locked) return undefined;
  return findRelease(trx, id);
}

export async function decideRelease(
  trx: Transaction<DB>,
  id: number,
  values: {
    state: CollectionActionState;
    decidedBy: string;
    userId: number | null;
    note: string | null;
    commandId: number | null;
    transactionId: string | null;
  },
): Promise<void> {
  await trx
    .updateTable('collection_actions')
    .set({
      state: values.state,
      decided_by: values.decidedBy,
      decided_by_user_id: values.userId,
      decided_at: sql<Date>`now()`,
      note: values.note,
      command_id: values.commandId,
      transaction_id: values.transactionId,
    })
    .where('id', '=', id)
    .execute();
}
