/**
 * The release approval queue (docs/features.md § Collections on autopilot): a paid loan's RELEASE waits for
 * an operator when the policy asks for approval; the lender's or the device's retailer's ADMINs approve it
 * (the command goes out through the one pipeline) or reject it, audited, kill switch or not (a release
 * is relief). Listed by state within the caller's tenant.
 */
import { COLLECTIONS_MESSAGES, type ReleaseRequest, type ReleaseState } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize, scopeFor } from '../../../authz';
import { conflict, notFound } from '../../../core/errors';
import type { Principal } from '../../../core/principal';
import { PRIORITY_SINGLE } from '../../../db/priority';
import { inTransaction } from '../../../db/transaction';
import type { DB } from '../../../db/types';
import { appendAudit } from '../../audit/repository';
import { recordCommandSet } from '../../commands/issue';
import type { CommandService } from '../../commands/service';
import { loanStatus } from '../../loans/repository';
import { type Caller, iso, readableDevice } from '../access';
import { decideRelease, findRelease, listReleases, lockRelease, type ReleaseRow } from './repository';

function releaseView(row: ReleaseRow): ReleaseRequest {
  return {
    id: Number(row.id),
    loanId: Number(row.loan_id),
    loanRef: row.loan_ref,
    imei: row.imei1,
    customerName: row.customer_name,
    retailerPhone: row.retailer_phone,
    paidAt: iso(row.paid_at),
    queuedAt: new Date(row.created_at).toISOString(),
    // Only decided or waiting releases are read here (an automatic one has no API state).
    state: row.release_state ?? 'APPROVED',
    decidedBy: row.decided_by,
    decidedAt: iso(row.decided_at),
    transactionId: row.transaction_id,
  };
}

export interface ReleaseServiceOptions {
  db: Kysely<DB>;
  commands: CommandService;
  /** A one-shot command's time to live; by default the command service's (it owns COMMAND_TTL), which tests may override. */
  oneShotTtlMs?: number;
}

export class ReleaseService {
  constructor(private readonly options: ReleaseServiceOptions) {}

  private get db() {
    return this.options.db;
  }

  async list(actor: Principal, state: ReleaseState, imei?: string): Promise<ReleaseRequest[]> {
    const scope = scopeFor(actor, 'collections');
    let imei1: string | null = null;
    if (imei !== undefined) {
      const device = await readableDevice(this.db, actor, imei);
      if (!device) return [];
      imei1 = device.imei1;
    }
    return (await listReleases(this.db, state, scope, imei1)).map(releaseView);
  }

  /**
   * Approves (the RELEASE goes out through the one pipeline, the rule and the approver as its user) or
   * rejects a release awaiting approval, kill switch or not: a release is relief (COLLECTION_RELIEF).
   */
  async decide(
    { actor, address }: Caller,
    id: number,
    decision: 'approve' | 'reject',
    reason: string | undefined,
  ): Promise<ReleaseRequest> {
    const { commands } = this.options;
    const outcome = await inTransaction(this.db, async (trx) => {
      const row = await lockRelease(trx, id);
      const unknown = () => notFound(COLLECTIONS_MESSAGES.releaseNotFound);
      if (!row) throw unknown();
      authorize(actor, 'collections', 'decide', { retailerPhone: row.retailer_phone }, unknown);
      if (row.state !== 'AWAITING_APPROVAL') throw conflict(COLLECTIONS_MESSAGES.releaseDecided);
      const audit = (result: string, details: Record<string, unknown>) =>
        appendAudit(trx, {
          actor,
          action: `collections.release.${decision}`,
          target: row.imei1,
          address,
          result,
          details: {
            actionId: id,
            loanRef: row.loan_ref,
            rule: row.rule,
            reason: reason ?? null,
            ...details,
          },
        });
      const decided = { decidedBy: actor.email, userId: actor.userId };
      if (decision === 'reject') {
        await decideRelease(trx, id, {
          ...decided,
          state: 'REJECTED',
          note: reason ?? null,
          commandId: null,
          transactionId: null,
        });
        await audit('REJECTED', {});
        return { refusal: null, requests: [], outcomes: [] };
      }
      // A payment reversed since it was queued: the loan is no longer paid.
      if ((await loanStatus(trx, row.loan_id)) !== 'PAID')
        throw conflict(COLLECTIONS_MESSAGES.releaseNotPaid);
      const requests = [
        {
          imei: row.imei1,
          command: 'RELEASE' as const,
          options: {},
          iface: 'C' as const,
          priority: PRIORITY_SINGLE,
          issuer: {
            label: `${row.rule}, approved by ${actor.email}`,
            userId: actor.userId,
            keyId: actor.keyId ?? null,
          },
          retailerPhone: actor.retailerPhone,
          batchId: null,
          audit: null,
        },
      ];
      const outcomes = await recordCommandSet(trx, requests, {
        ...commands.recordOptions(true),
        ...(this.options.oneShotTtlMs !== undefined ? { oneShotTtlMs: this.options.oneShotTtlMs } : {}),
        serverCommands: false,
      });
      const [recorded] = outcomes;
      if (!recorded?.recorded) {
        const refusal = recorded?.refusal ?? 'not registered';
        await decideRelease(trx, id, {
          ...decided,
          state: 'REFUSED',
          note: refusal,
          commandId: null,
          transactionId: null,
        });
        await audit('REFUSED', { refusal });
        return { refusal, requests: [], outcomes: [] };
      }
      await decideRelease(trx, id, {
        ...decided,
        state: 'ISSUED',
        note: reason ?? null,
        commandId: recorded.id,
        transactionId: recorded.transactionId,
      });
      await audit('APPROVED', { transactionId: recorded.transactionId });
      return { refusal: null, requests, outcomes };
    });
    if (outcome.refusal) throw conflict(COLLECTIONS_MESSAGES.releaseRefused(outcome.refusal));
    if (outcome.requests.length > 0) commands.afterCommit(outcome.outcomes, outcome.requests);
    // Read back by id: the decision just committed, whatever else is queued or decided.
    const view = await findRelease(this.db, id);
    if (!view) throw notFound(COLLECTIONS_MESSAGES.releaseNotFound);
    return releaseView(view);
  }
}
