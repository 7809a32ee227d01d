import { z } from 'zod';
import { KEY_STATUSES, userLevelSchema } from '../roles';

/**
 * Why a key is inactive: switched off by hand in Key Management, or with its owner's account (a
 * password reset or a disable deactivates the user's keys; a forced logout may).
 */
export const KEY_DEACTIVATION_REASONS = [
  'manual',
  'password reset',
  'account disabled',
  'forced logout',
] as const;
export type KeyDeactivationReason = (typeof KEY_DEACTIVATION_REASONS)[number];

/** An integrator API key as Key Management lists it. The key itself is never listed. */
export const apiKeySchema = z.object({
  id: z.number().int(),
  key_name: z.string(),
  status: z.enum(KEY_STATUSES),
  created_at: z.string(),
  user_id: z.number().int(),
  owner_email: z.string(),
  last_used_at: z.string().nullable(),
  /** The rest say why an inactive key is inactive; all null for an active key. */
  deactivated_at: z.string().nullable(),
  /** Who switched it off (email); null when the system did, for a password reset. */
  deactivated_by: z.string().nullable(),
  /** The lowest level that may activate it again. */
  deactivated_by_level: userLevelSchema.nullable(),
  deactivated_reason: z.enum(KEY_DEACTIVATION_REASONS).nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

export const viewKeysResponseSchema = z.array(apiKeySchema);

export const generateKeyRequestSchema = z.object({
  key_name: z.string().trim().min(1, 'Key name is required').max(100),
  /** The signed-in user's password again: a stolen session alone cannot mint a lasting credential. */
  password: z.string({ error: 'Password is required' }).min(1, 'Password is required').max(1024),
  /** The creating user; must be the signed-in user (kept for compatibility). */
  user_id: z.coerce.number().int().positive().optional(),
});

export const generateKeyResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  /** Shown once: only its hash is stored. */
  key: z.string(),
  id: z.number().int(),
});

export const updateKeyStatusRequestSchema = z.object({
  keyId: z.coerce.number().int().positive(),
  status: z.enum(KEY_STATUSES),
});

/** What Key Management's calls answer, once for the server, the console and the tests. */
export const KEY_MESSAGES = {
  generated: 'Key generated successfully. Copy it now: it will not be shown again.',
  onlyOwn: 'A key can only be generated for yourself.',
  wrongPassword: 'The password is not correct. No key was generated.',
  notFound: 'Key not found',
  notYours: 'You can change your own keys only.',
  /** Re-activation of a key switched off by a higher level, or with its owner's account (the list says why). */
  reactivationNeeds: (level: 'ADMIN' | 'SUPERADMIN') =>
    level === 'SUPERADMIN'
      ? 'Only a SUPERADMIN can activate this key again.'
      : 'Only an ADMIN or a SUPERADMIN can activate this key again.',
  statusUpdated: (status: 'active' | 'inactive') =>
    `Key ${status === 'active' ? 'activated' : 'deactivated'} successfully`,
} as const;
