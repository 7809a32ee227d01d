/**
 * Enrollment secrets (SUPERADMIN) and re-registration requests (Device Details: ADMIN and SUPERADMIN
 * decide). docs/device-protocol.md §1 says how agents use them.
 */
import { z } from 'zod';

export const enrollmentSecretNameSchema = z
  .string()
  .trim()
  .regex(/^[A-Za-z0-9._-]{1,60}$/, 'name must be 1-60 letters, digits, ".", "_" or "-"');

export const addEnrollmentSecretRequestSchema = z.object({
  name: enrollmentSecretNameSchema,
  /** ISO date-time after which the secret admits no one; none: until revoked. */
  expiresAt: z.iso.datetime({ offset: true }).optional().nullable(),
});
export const addEnrollmentSecretResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  id: z.number(),
  name: z.string(),
  /** Shown this once: only its SHA-256 is kept. */
  secret: z.string(),
  expiresAt: z.string().nullable(),
});

export const enrollmentSecretSchema = z.object({
  id: z.number(),
  name: z.string(),
  createdAt: z.string(),
  createdBy: z.string(),
  expiresAt: z.string().nullable(),
  revokedAt: z.string().nullable(),
  revokedBy: z.string().nullable(),
  lastUsedAt: z.string().nullable(),
  state: z.enum(['active', 'expired', 'revoked']),
});
export type EnrollmentSecret = z.infer<typeof enrollmentSecretSchema>;
export const listEnrollmentSecretsResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(enrollmentSecretSchema),
});
export const revokeEnrollmentSecretRequestSchema = z.object({ id: z.number().int().positive() });

export const REREGISTRATION_STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'USED'] as const;
export const reregistrationRequestSchema = z.object({
  id: z.number(),
  imei1: z.string(),
  status: z.enum(REREGISTRATION_STATUSES),
  address: z.string().nullable(),
  /** What the refused registration claimed: imei2, brand, model, retailer phone, … */
  profile: z.record(z.string(), z.unknown()),
  /** Whether it carried a device key (a new one: the enrolled key would have proven itself). */
  newKey: z.boolean(),
  attempts: z.number(),
  createdAt: z.string(),
  lastAttemptAt: z.string(),
  decidedAt: z.string().nullable(),
  decidedBy: z.string().nullable(),
  approvedUntil: z.string().nullable(),
  usedAt: z.string().nullable(),
});
export type ReregistrationRequest = z.infer<typeof reregistrationRequestSchema>;

export const deviceIdentityRequestSchema = z.object({
  imei: z.string().regex(/^\d{15}$/, 'imei must be 15 digits'),
});
/** The verdict on the attestation of a device's key: whether it passed every check, and each one it failed. */
export const keyAttestationSchema = z.object({
  passed: z.boolean(),
  /** One sentence per failed check (a chain not to the roots, an unlocked bootloader, another app, …). */
  reasons: z.array(z.string()),
  checkedAt: z.string(),
});
export type KeyAttestation = z.infer<typeof keyAttestationSchema>;

export const deviceIdentityResponseSchema = z.object({
  status: z.literal('success'),
  imei1: z.string(),
  /** Whether the device enrolled a key, and where an attestation said it lives. */
  hasKey: z.boolean(),
  keySecurityLevel: z.enum(['Software', 'TrustedEnvironment', 'StrongBox']).nullable(),
  keyEnrolledAt: z.string().nullable(),
  /** The verdict on the key's attestation; null when none was sent or checked. */
  attestation: keyAttestationSchema.nullable(),
  requests: z.array(reregistrationRequestSchema),
});
export type DeviceIdentity = z.infer<typeof deviceIdentityResponseSchema>;

export const decideReregistrationRequestSchema = z.object({
  id: z.number().int().positive(),
  decision: z.enum(['approve', 'reject']),
});
export const decideReregistrationResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
});

export const ENROLLMENT_MESSAGES = {
  secretAdded: (name: string) => `Enrollment secret ${name} added. Copy it now: it is not shown again.`,
  secretRevoked: (name: string) => `Enrollment secret ${name} revoked.`,
  secretNameTaken: (name: string) => `An active enrollment secret named ${name} exists already.`,
  secretNotFound: 'No active enrollment secret by that id or name.',
  expiryInPast: 'expiresAt must be in the future.',
  approved: (imei: string, until: string) =>
    `Registration of ${imei} approved: the device may register once until ${until}.`,
  rejected: (imei: string) => `Registration request for ${imei} rejected.`,
  requestNotPending: 'This request is no longer pending.',
} as const;
