/**
 * Device registration over HTTPS (docs/device-protocol.md §1): the enrollment secret admits the agent, and
 * the device key decides who it is.
 *
 * - A first registration of an IMEI no device holds is admitted on the secret (with the device key the
 *   agent sends, or without one while `DEVICE_KEY=optional`). So is the next registration of a device
 *   de-enrolled by Formatted Device or released.
 * - A registration of an enrolled IMEI needs proof: a signature by the enrolled device key over a nonce
 *   the server issued for that IMEI, or an operator's approval of an earlier refused attempt. Without
 *   one it is refused (409) and kept as a request for an operator, and nothing of the device changes:
 *   not its credential, connections, profile, retailer, desired state or Match_Status.
 * - One IMEI, one device: an IMEI held by another device, in either slot, is refused (409); the
 *   `device_imeis` table's key enforces it for registrations that race.
 * - An Android key attestation, when sent, is verified against the configured roots, its challenge must be
 *   the nonce, its key the device key; its security level is recorded (`DEVICE_ATTESTATION`).
 * - With an external broker under dynamic security the device's broker client is provisioned before the
 *   registration commits: a credential is never handed out that the broker does not know.
 * Every admitted and every refused attempt writes an audit row.
 */

import { createPublicKey, randomBytes, verify as verifySignature } from 'node:crypto';
import {
  type DeviceRegistration,
  deviceClientId,
  type KeyAttestation,
  REGISTRATION_CODES,
  registrationChallenge,
} from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import { AppError, badRequest } from '../../core/errors';
import { inTransaction } from '../../db/transaction';
import type { DB, DeviceRow, KeySecurityLevel, RegistrationStatus } from '../../db/types';
import { randomSecret, sha256Hex } from '../../lib/secrets';
import { appendAudit } from '../audit/repository';
import {
  deviceRegisteredEvent,
  type EventSink,
  NO_EVENTS,
  reregistrationRequestedEvent,
} from '../webhooks/events';
import {
  type AttestationOutcome,
  type AttestationPolicy,
  type AttestationRoots,
  attestationVerdict,
  verifyAttestation,
} from './attestation';
import {
  consumeNonce,
  insertNonce,
  isFinanced,
  lockForRegistration,
  NOW,
  otherHolders,
  recordReregistrationRequest,
  useApproval,
  writeRegistration,
} from './repository';

export { REGISTRATION_MESSAGES } from '../enrollment/service';

export const IDENTITY_MESSAGES = {
  needsApproval:
    'This IMEI is enrolled on another installation. Registering it again needs a signature by its device key, or an operator’s approval on Device Details.',
  imeiInUse: (imei: string) => `IMEI ${imei} belongs to another enrolled device.`,
  attestationRequired: 'This server enrolls only device keys with a valid Android key attestation.',
  attestationRefused: (reason: string) =>
    `This server enrolls only device keys with a valid Android key attestation. ${reason}`,
  keyRequired: 'Invalid publicKey: a device key is required',
  badKey: 'Invalid publicKey: an EC P-256 public key in SPKI DER, base64',
  badProof: 'Invalid signature: it does not verify with publicKey over the nonce',
  badNonce: 'Invalid nonce: unknown, used or expired (ask POST /device/v1/nonce again)',
  brokerUnavailable:
    'The device broker is unavailable, so no credential can be issued. Please try again shortly.',
} as const;

export type Admission = 'first' | 'signature' | 'approval' | 'formatted' | 'released';

export interface IdentityPolicy {
  deviceKey: 'optional' | 'required';
  attestation: 'off' | 'record' | 'require';
  roots: AttestationRoots | null;
  nonceTtlMs: number;
  /** The app and revocation checks an attestation must also pass; none unless given. */
  checks?: () => AttestationPolicy;
}

const noRoots: AttestationOutcome = {
  ok: false,
  reason: 'No attestation roots are configured.',
  reasons: ['No attestation roots are configured.'],
};

/** Provisions the device's own broker client (external broker with dynamic security), or nothing. */
export type ProvisionBroker = ((imei1: string, credential: string) => Promise<void>) | null;

/** The device channel as registration sees it (the container's `ChannelEndpoint`), set when it starts. */
export interface RegistrationChannel {
  readonly provisionDevice: ProvisionBroker;
}

/**
 * Admits a registration call by the enrollment secret it carries (modules/enrollment) and its address's
 * limits; resolves with the secret's name, or throws (401, 429).
 */
export type AdmitEnrollment = (
  secret: string | undefined,
  address: string,
  kind: 'register' | 'nonce',
) => Promise<string>;

export interface RegistrationServiceOptions {
  db: Kysely<DB>;
  policy: IdentityPolicy;
  channel: RegistrationChannel;
  admit: AdmitEnrollment;
  /** Webhook events: device.registered, device.reregistration_requested. */
  events?: EventSink;
}

export interface Registered {
  credential: string;
  registrationstatus: RegistrationStatus;
  admittedBy: Admission;
  keySecurityLevel: KeySecurityLevel | null;
  clientId: string;
}

function parseDeviceKey(publicKey: string): string {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') throw 0;
    // The canonical form: what an equal key compares equal to.
    return key.export({ format: 'der', type: 'spki' }).toString('base64');
  } catch {
    throw badRequest(IDENTITY_MESSAGES.badKey);
  }
}

function signedBy(publicKey: string, imei1: string, nonce: string, signature: string): boolean {
  try {
    const key = createPublicKey({ key: Buffer.from(publicKey, 'base64'), format: 'der', type: 'spki' });
    return verifySignature(
      'sha256',
      Buffer.from(registrationChallenge(imei1, nonce), 'utf8'),
      { key, dsaEncoding: 'der' },
      Buffer.from(signature, 'base64'),
    );
  } catch {
    return false;
  }
}

type Outcome =
  | { kind: 'admitted'; registered: Registered; previous: DeviceRow | undefined; approval: number | null }
  | {
      kind: 'refused';
      status: 400 | 403 | 409;
      code: string;
      message: string;
      reason: string;
      request?: number;
    };

const refused = (
  status: 400 | 403 | 409,
  code: string,
  message: string,
  reason: string,
  request?: number,
): Outcome => ({ kind: 'refused', status, code, message, reason, ...(request ? { request } : {}) });

const profileOf = (input: DeviceRegistration) => ({
  imei2: input.imei2 || null,
  manufacturer: input.manufacturer,
  brand: input.brand,
  model: input.model,
  appversion: input.appversion,
  apptype: input.apptype,
  retailer_phone: input.retailer_phone ?? null,
});

/** Device registration: admission, nonces, and who a registering device is (container.ts builds it). */
export class RegistrationService {
  constructor(private readonly options: RegistrationServiceOptions) {}

  /** See `AdmitEnrollment`. */
  admit(secret: string | undefined, address: string, kind: 'register' | 'nonce'): Promise<string> {
    return this.options.admit(secret, address, kind);
  }

  /** Issues a single-use nonce for a registration of `imei1`, valid for the policy's nonce time to live. */
  async issueNonce(imei1: string): Promise<{ nonce: string; expiresAt: Date }> {
    const nonce = randomBytes(32).toString('base64url');
    const expiresAt = await insertNonce(
      this.options.db,
      sha256Hex(nonce),
      imei1,
      this.options.policy.nonceTtlMs,
    );
    return { nonce, expiresAt };
  }

  /**
   * Registers a device, or refuses it (AppError) having changed nothing of the device. `secretName` is the
   * enrollment secret that admitted the call (for the audit row).
   */
  async register(
    input: DeviceRegistration,
    context: { address: string; secretName: string },
  ): Promise<Registered> {
    const { db, policy } = this.options;
    const events = this.options.events ?? NO_EVENTS;
    // Read now: the channel sets it when it starts.
    const provision = this.options.channel.provisionDevice;
    let emitted = 0;
    const imei2 = input.imei2 || null;
    const audit = (result: string, details: Record<string, unknown>) =>
      appendAudit(db, {
        actor: { label: `device:${input.imei1}` },
        action: 'device.register',
        target: input.imei1,
        address: context.address,
        result,
        details: { secret: context.secretName, imei2, ...details },
      });
    let publicKey: string | null = null;
    try {
      publicKey = input.publicKey ? parseDeviceKey(input.publicKey) : null;
      if (!publicKey && policy.deviceKey === 'required') throw badRequest(IDENTITY_MESSAGES.keyRequired);
    } catch (error) {
      await audit('refused', { reason: 'device-key', profile: profileOf(input) });
      throw error;
    }
    // The attestation is checked before the transaction (it is pure); the nonce it names is used up inside.
    let attested: KeySecurityLevel | null = null;
    let attestationProblem: string | null = null;
    let verdict: KeyAttestation | null = null;
    if (input.attestation && input.nonce && publicKey && policy.attestation !== 'off') {
      const outcome = policy.roots
        ? await verifyAttestation({
            chain: input.attestation,
            publicKey,
            challenge: Buffer.from(input.nonce, 'utf8'),
            roots: policy.roots,
            ...(policy.checks ? { policy: policy.checks() } : {}),
          })
        : noRoots;
      if (outcome.ok) attested = outcome.securityLevel;
      else attestationProblem = outcome.reason;
      verdict = attestationVerdict(outcome);
    }

    let outcome: Outcome;
    try {
      outcome = await inTransaction(db, async (trx) => {
        // Serialise registrations of one device (one that does not exist yet too).
        const existing = await lockForRegistration(trx, input.imei1);
        const nonceValid = input.nonce ? await consumeNonce(trx, sha256Hex(input.nonce), input.imei1) : false;
        if (input.nonce && !nonceValid)
          return refused(400, 'VALIDATION_FAILED', IDENTITY_MESSAGES.badNonce, 'nonce');

        const taken = await otherHolders(trx, input.imei1, imei2 ? [input.imei1, imei2] : [input.imei1]);
        if (taken[0])
          return refused(
            409,
            REGISTRATION_CODES.imeiInUse,
            IDENTITY_MESSAGES.imeiInUse(taken[0]),
            'imei-in-use',
          );

        let admittedBy: Admission;
        let approval: number | null = null;
        if (!existing) admittedBy = 'first';
        else if (existing.claimstatus === 'DEENROLLED') admittedBy = 'formatted';
        else if (existing.claimstatus === 'RELEASED') admittedBy = 'released';
        else if (
          input.signature &&
          input.nonce &&
          existing.public_key &&
          signedBy(existing.public_key, input.imei1, input.nonce, input.signature)
        )
          admittedBy = 'signature';
        else {
          approval = await useApproval(trx, input.imei1, publicKey);
          if (approval === null) {
            const reason = !input.signature
              ? 'no-proof'
              : existing.public_key
                ? 'bad-signature'
                : 'no-enrolled-key';
            const request = await recordReregistrationRequest(trx, {
              imei1: input.imei1,
              address: context.address,
              profile: profileOf(input),
              publicKey,
            });
            emitted = await events.emit(trx, [
              reregistrationRequestedEvent({ id: request, imei1: input.imei1, newKey: publicKey !== null }),
            ]);
            return refused(
              409,
              REGISTRATION_CODES.needsApproval,
              IDENTITY_MESSAGES.needsApproval,
              reason,
              request,
            );
          }
          admittedBy = 'approval';
        }
        // A proof of possession on an admission by the secret: the signature must be the new key's.
        if (admittedBy !== 'signature' && input.signature && input.nonce) {
          if (!publicKey || !signedBy(publicKey, input.imei1, input.nonce, input.signature))
            return refused(400, 'VALIDATION_FAILED', IDENTITY_MESSAGES.badProof, 'bad-proof-of-possession');
        }
        // The key the device holds from now on: a new one (first, formatted, released, approved, or rotated
        // under the old key's signature), or the enrolled one.
        const newKey = publicKey !== null && publicKey !== existing?.public_key;
        const keepsKey = admittedBy === 'signature' && !newKey;
        if (policy.attestation === 'require' && !keepsKey && attested === null) {
          const message = attestationProblem
            ? IDENTITY_MESSAGES.attestationRefused(attestationProblem)
            : IDENTITY_MESSAGES.attestationRequired;
          return refused(403, 'ATTESTATION_REQUIRED', message, 'attestation');
        }

        const registered = await applyRegistration(trx, input, existing, {
          admittedBy,
          publicKey: keepsKey ? (existing?.public_key ?? null) : publicKey,
          securityLevel: keepsKey ? (existing?.key_security_level ?? null) : attested,
          keyChanged: !keepsKey,
          verdict,
        });
        emitted = await events.emit(trx, [
          deviceRegisteredEvent({
            imei1: input.imei1,
            imei2,
            brand: input.brand ?? null,
            model: input.model ?? null,
            retailerPhone: input.retailer_phone ?? existing?.retailer_phone ?? null,
            registrationStatus: registered.registrationstatus,
          }),
        ]);
        // The broker learns the credential before the registration commits (external dynamic security).
        if (provision) {
          await provision(input.imei1, registered.credential).catch((error: unknown) => {
            throw Object.assign(new AppError(503, 'UNAVAILABLE', IDENTITY_MESSAGES.brokerUnavailable), {
              cause: error,
            });
          });
        }
        return { kind: 'admitted', registered, previous: existing, approval } satisfies Outcome;
      });
    } catch (error) {
      // Two registrations claiming one IMEI at once: the second meets the first's row in device_imeis.
      if ((error as { code?: string }).code !== '23505') throw error;
      outcome = refused(
        409,
        REGISTRATION_CODES.imeiInUse,
        IDENTITY_MESSAGES.imeiInUse(imei2 ?? input.imei1),
        'imei-in-use',
      );
    }

    if (emitted > 0) events.wake();
    if (outcome.kind === 'refused') {
      await audit('refused', {
        reason: outcome.reason,
        ...(outcome.request ? { request: outcome.request } : {}),
        profile: profileOf(input),
        newKey: publicKey !== null,
        ...(attestationProblem ? { attestation: attestationProblem } : {}),
      });
      throw new AppError(outcome.status, outcome.code as never, outcome.message);
    }
    const { registered, previous } = outcome;
    await audit('success', {
      registrationstatus: registered.registrationstatus,
      admittedBy: registered.admittedBy,
      ...(outcome.approval ? { request: outcome.approval } : {}),
      key: registered.keySecurityLevel ?? (publicKey || previous?.public_key ? 'not attested' : 'none'),
      ...(attestationProblem ? { attestation: attestationProblem } : {}),
      ...(previous && previous.retailer_phone !== (input.retailer_phone ?? previous.retailer_phone)
        ? { retailerFrom: previous.retailer_phone }
        : {}),
    });
    return registered;
  }
}

async function applyRegistration(
  trx: Transaction<DB>,
  input: DeviceRegistration,
  existing: DeviceRow | undefined,
  identity: {
    admittedBy: Admission;
    publicKey: string | null;
    securityLevel: KeySecurityLevel | null;
    keyChanged: boolean;
    /** The attestation's verdict on the new key (null: none sent, or not checked). */
    verdict: KeyAttestation | null;
  },
): Promise<Registered> {
  const credential = randomSecret(24);
  const imei2 = input.imei2 || null;
  const match = (await isFinanced(trx, imei2 ? [input.imei1, imei2] : [input.imei1])) ? 'YES' : 'NO';
  const registrationstatus: RegistrationStatus = existing ? 'RE-REGISTERED' : 'REGISTERED';
  const fields = {
    ...profileOf(input),
    // A re-registration that does not name a retailer keeps the one the device had.
    retailer_phone: input.retailer_phone ?? existing?.retailer_phone ?? null,
    match_status: match as 'YES' | 'NO',
    credential_hash: sha256Hex(credential),
    public_key: identity.publicKey,
    key_security_level: identity.securityLevel,
    ...(identity.keyChanged
      ? {
          key_enrolled_at: identity.publicKey ? NOW : null,
          key_attestation: identity.verdict ? JSON.stringify(identity.verdict) : null,
        }
      : {}),
  };
  await writeRegistration(trx, {
    imei1: input.imei1,
    imei2,
    existing,
    fields,
    profile: profileOf(input),
    match,
    registrationstatus,
  });
  return {
    credential,
    registrationstatus,
    admittedBy: identity.admittedBy,
    keySecurityLevel: identity.securityLevel,
    clientId: deviceClientId(input.imei1),
  };
}
