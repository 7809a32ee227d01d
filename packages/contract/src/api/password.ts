import { z } from 'zod';

export const forgotPasswordRequestSchema = z.object({ email: z.string().trim().max(254) });
/** The reset token is mailed, never returned; `token` is absent. */
export const forgotPasswordResponseSchema = z.object({ status: z.literal('success'), message: z.string() });

export const resetPasswordRequestSchema = z.object({
  token: z.string().max(512),
  newPassword: z.string().max(1024),
});

/** Password reset tokens live 30 minutes. */
export const RESET_TOKEN_TTL_MS = 30 * 60_000;
