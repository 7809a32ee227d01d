/**
 * A device's identity as Device Details shows it: whether it enrolled a device key and where an
 * attestation said the key lives, and the registrations of it that were refused for want of proof, which
 * an ADMIN or SUPERADMIN approves (the device may then register once within the window) or rejects.
 */
import {
  type DeviceIdentity,
  ENROLLMENT_MESSAGES,
  MESSAGES,
  type ReregistrationRequest,
} from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { may, mayIfFound } from '../../authz';
import { conflict, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import {
  decideReregistration as decide,
  findDevice,
  findReregistrationRequest,
  reregistrationRequests,
} from './repository';

const iso = (value: Date | string | null) => (value === null ? null : new Date(value).toISOString());

/** A device's identity on Device Details, and the operators' decisions on its refused registrations. */
export class IdentityService {
  constructor(private readonly db: Kysely<DB>) {}

  /** The device's key and its re-registration requests; a retailer user sees only that retailer's devices. */
  async deviceIdentity(actor: Principal, imei: string): Promise<DeviceIdentity> {
    const { db } = this;
    const device = await findDevice(db, imei);
    if (!mayIfFound(actor, 'devices', 'read', device, (x) => ({ retailerPhone: x.retailer_phone })))
      throw notFound(MESSAGES.noResults);
    const requests = await reregistrationRequests(db, device.imei1);
    return {
      status: 'success',
      imei1: device.imei1,
      hasKey: device.public_key !== null,
      keySecurityLevel: device.key_security_level,
      keyEnrolledAt: iso(device.key_enrolled_at),
      attestation: device.key_attestation,
      requests: requests.map(
        (r): ReregistrationRequest => ({
          id: Number(r.id),
          imei1: r.imei1,
          status: r.status,
          address: r.address,
          profile: r.profile,
          newKey: r.public_key !== null,
          attempts: Number(r.attempts),
          createdAt: new Date(r.created_at).toISOString(),
          lastAttemptAt: new Date(r.last_attempt_at).toISOString(),
          decidedAt: iso(r.decided_at),
          decidedBy: r.decided_by,
          approvedUntil: iso(r.approved_until),
          usedAt: iso(r.used_at),
        }),
      ),
    };
  }

  /** Approves or rejects a pending request (ADMIN, SUPERADMIN; a retailer admin only for that retailer's devices). */
  async decideReregistration(
    actor: Principal,
    body: { id: number; decision: 'approve' | 'reject' },
    context: { address: string; windowMs: number },
  ): Promise<{ status: 'success'; message: string }> {
    const { db } = this;
    const request = await findReregistrationRequest(db, body.id);
    const device = request && { retailerPhone: request.retailer_phone };
    // Another tenant's device's request is unknown, as one that does not exist.
    if (!request || !mayIfFound(actor, 'devices', 'read', device, (d) => d))
      throw notFound(MESSAGES.noResults);
    if (!may(actor, 'devices', 'manage', device))
      throw forbidden('Only an ADMIN or SUPERADMIN decides a registration request.');
    const decided = await decide(db, body.id, {
      status: body.decision === 'approve' ? 'APPROVED' : 'REJECTED',
      by: actor.email,
      windowMs: context.windowMs,
    });
    if (!decided) throw conflict(ENROLLMENT_MESSAGES.requestNotPending);
    await appendAudit(db, {
      actor,
      action: body.decision === 'approve' ? 'device.reregistration.approve' : 'device.reregistration.reject',
      target: decided.imei1,
      address: context.address,
      result: 'success',
      details: {
        request: Number(decided.id),
        claimedFrom: decided.address,
        profile: decided.profile,
        newKey: decided.public_key !== null,
        ...(decided.approved_until ? { approvedUntil: iso(decided.approved_until) } : {}),
      },
    });
    const until = iso(decided.approved_until);
    return {
      status: 'success',
      message:
        body.decision === 'approve' && until
          ? ENROLLMENT_MESSAGES.approved(decided.imei1, until)
          : ENROLLMENT_MESSAGES.rejected(decided.imei1),
    };
  }
}
