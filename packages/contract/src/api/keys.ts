import { z } from 'zod';
import { KEY_STATUSES } from '../roles';

/** An integrator API key as Key Management lists it (spec §3 API key). The key itself is never listed. */
export const apiKeySchema = z.object({
  id: z.number().int(),
  key_name: z.string(),
  status: z.enum(KEY_STATUSES),
  created_at: z.string(),
  user_id: z.number().int(),
  owner_email: z.string(),
  last_used_at: z.string().nullable(),
});
export type ApiKey = z.infer<typeof apiKeySchema>;

export const viewKeysResponseSchema = z.array(apiKeySchema);

export const generateKeyRequestSchema = z.object({
  key_name: z.string().trim().min(1, 'Key name is required').max(100),
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
