/**
 * Enrollment secrets: what admits a device agent's registration. Several named secrets, each with an
 * optional expiry, stored as their SHA-256 (a secret is shown once, when it is added), revocable without
 * touching the devices enrolled with it. `ENROLLMENT_SECRET` from the environment, when set, admits too
 * (it is configuration; it is never stored). Wrong secrets are throttled per address as failed sign-ins
 * are; right ones are limited per address as well, so a leaked secret cannot be used at any rate.
 */
import { timingSafeEqual } from 'node:crypto';
import { ENROLLMENT_MESSAGES, type EnrollmentSecret } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { authorize } from '../../authz';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import { type AuditEntry, appendAudit } from '../audit/repository';
import { refundAttempt, reserveAttempt, throttledError } from '../sessions/repository';
import { insertSecret, listSecrets, revokeSecret, useSecret } from './repository';

export const REGISTRATION_MESSAGES = {
  badSecret: 'Unknown enrollment secret',
  throttled: (minutes: number) =>
    `Too many registrations with a wrong enrollment secret from this address. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
  tooMany: (minutes: number) =>
    `Too many registrations from this address. Please try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
} as const;

export const ENROLLMENT_SECRET_MESSAGES = {
  lenderOnly: "Enrollment secrets are the lender's: a retailer user cannot see or change them.",
} as const;

/**
 * The console's calls on enrollment secrets (list, add, revoke) are the lender's
 * (authz/resources/enrollment.ts); the CLI, run by an operator on the server, needs no principal.
 */
export function assertManagesSecrets(actor: Principal): void {
  authorize(actor, 'enrollment', 'manage', 'secrets', () => forbidden(ENROLLMENT_SECRET_MESSAGES.lenderOnly));
}

/** The name the environment's secret goes by in the audit log. */
export const CONFIGURED_SECRET_NAME = 'ENROLLMENT_SECRET';

export interface AdmissionLimits {
  /** Wrong secrets per address in the window (then 429 for any secret). */
  maxFailures: number;
  /** Calls with a right secret per address in the window, per kind of call (nonce, registration). */
  maxAdmitted: number;
  windowMs: number;
}

function isLoopback(address: string): boolean {
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}

function sameSecret(expected: string, given: string): boolean {
  return timingSafeEqual(Buffer.from(sha256Hex(expected)), Buffer.from(sha256Hex(given)));
}

/** Enrollment secrets and the admission of registrations by them. */
export class EnrollmentService {
  private readonly db: Kysely<DB>;

  constructor(deps: { db: Kysely<DB> }) {
    this.db = deps.db;
  }

  /**
   * Admits a call by its enrollment secret and returns the secret's name. Refused with 429 while the
   * address is throttled (too many wrong secrets, or too many `kind` calls with a right one), 401 for a
   * missing, wrong, expired or revoked secret (counted as a failure of the address).
   */
  async admitEnrollment(
    configured: string | undefined,
    given: string | undefined,
    address: string,
    kind: 'register' | 'nonce',
    limits: AdmissionLimits,
  ): Promise<string> {
    const { db } = this;
    const failures = `enroll-addr:${address}`;
    // Agents on the server's own machine (the demo fleet, `npm run sim` against localhost) register
    // thousands at once; the limit is for the network.
    const admitted = isLoopback(address) ? null : `enroll-ok-${kind}:${address}`;
    // Counted as a wrong secret before the secret is checked (atomically, so calls sent together are at
    // most `maxFailures` checked), and taken back right after when it was right.
    const [wrong] = await reserveAttempt(db, [{ key: failures, max: limits.maxFailures }], limits.windowMs);
    if (wrong) throw throttledError(wrong.retryAfterMs, REGISTRATION_MESSAGES.throttled);
    let name: string | null = null;
    if (given) {
      if (configured && sameSecret(configured, given)) name = CONFIGURED_SECRET_NAME;
      else name = (await useSecret(db, sha256Hex(given)))?.name ?? null;
    }
    if (name === null) throw new AppError(401, 'UNAUTHENTICATED', REGISTRATION_MESSAGES.badSecret);
    await refundAttempt(db, [failures], limits.windowMs);
    if (admitted) {
      // Right secrets have their own allowance, counted as atomically; a refused call is not counted.
      const [busy] = await reserveAttempt(db, [{ key: admitted, max: limits.maxAdmitted }], limits.windowMs);
      if (busy) throw throttledError(busy.retryAfterMs, REGISTRATION_MESSAGES.tooMany);
    }
    return name;
  }

  /**
   * Adds a named secret; the secret itself is returned this once. With `audit`, the audit row is written
   * in the same transaction as the secret.
   */
  async addEnrollmentSecret(
    input: { name: string; expiresAt?: string | Date | null | undefined; createdBy: string },
    audit?: SecretAudit,
  ): Promise<{ id: number; name: string; secret: string; expiresAt: Date | null }> {
    const { db } = this;
    const expiresAt = input.expiresAt ? new Date(input.expiresAt) : null;
    if (expiresAt && !(expiresAt.getTime() > Date.now())) throw badRequest(ENROLLMENT_MESSAGES.expiryInPast);
    const secret = `les_${randomSecret(24)}`;
    try {
      return await inTransaction(db, async (trx) => {
        const row = await insertSecret(trx, {
          name: input.name,
          hash: sha256Hex(secret),
          createdBy: input.createdBy,
          expiresAt,
        });
        const added = { id: Number(row.id), name: row.name, secret, expiresAt };
        if (audit)
          await appendAudit(trx, {
            actor: audit.actor,
            action: 'enrollment.secret.add',
            target: added.name,
            address: audit.address ?? null,
            result: 'success',
            details: { id: added.id, expiresAt: expiresAt?.toISOString() ?? null },
          });
        return added;
      });
    } catch (error) {
      if ((error as { code?: string }).code === '23505')
        throw conflict(ENROLLMENT_MESSAGES.secretNameTaken(input.name));
      throw error;
    }
  }

  /** Revokes a secret by id or name; with `audit`, the audit row is written in the same transaction. */
  async revokeEnrollmentSecret(
    which: { id: number } | { name: string },
    by: string,
    audit?: SecretAudit,
  ): Promise<{ id: number; name: string }> {
    const { db } = this;
    return inTransaction(db, async (trx) => {
      const revoked = await revokeSecret(trx, which, by);
      if (!revoked) throw notFound(ENROLLMENT_MESSAGES.secretNotFound);
      if (audit)
        await appendAudit(trx, {
          actor: audit.actor,
          action: 'enrollment.secret.revoke',
          target: revoked.name,
          address: audit.address ?? null,
          result: 'success',
          details: { id: revoked.id },
        });
      return revoked;
    });
  }

  /** Every secret with its state; never the secret. */
  async enrollmentSecrets(): Promise<EnrollmentSecret[]> {
    const { db } = this;
    const now = Date.now();
    return (await listSecrets(db)).map((row) => ({
      id: Number(row.id),
      name: row.name,
      createdAt: new Date(row.created_at).toISOString(),
      createdBy: row.created_by,
      expiresAt: iso(row.expires_at),
      revokedAt: iso(row.revoked_at),
      revokedBy: row.revoked_by,
      lastUsedAt: iso(row.last_used_at),
      state: row.revoked_at
        ? 'revoked'
        : row.expires_at && new Date(row.expires_at).getTime() <= now
          ? 'expired'
          : 'active',
    }));
  }
}

/** Who an enrollment secret's change is audited as: a principal (the console) or a label (the CLI). */
export interface SecretAudit {
  actor: AuditEntry['actor'];
  address?: string;
}

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/**
 * The demo fleet's secret: a fresh `demo` secret at each start (the one of the last start is revoked), so
 * the printed secret is the one that works and nothing is kept in plaintext.
 */
export async function rotateDemoSecret(db: Kysely<DB>): Promise<string> {
  await revokeSecret(db, { name: 'demo' }, 'demo').catch(() => null);
  return (await new EnrollmentService({ db }).addEnrollmentSecret({ name: 'demo', createdBy: 'demo' }))
    .secret;
}
