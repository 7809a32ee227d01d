/**
 * Who issued a command or started a batch, as its level: a user's, or the system's. Read by the level
 * rules (authority.ts) and by the audit rows of a cancel or a batch control, which record it.
 */
import type { UserLevel } from '@lendlock/contract';

/** Who issued a command or started a batch: a user's level, or the system. */
export type IssuerLevel = UserLevel | 'system';

/** Every level an issuer or a batch's owner may have. */
export const ISSUER_LEVELS: readonly IssuerLevel[] = ['USER', 'ADMIN', 'SUPERADMIN', 'system'];

/** An issuer's level from its user row: no user is the system; an unknown level ranks highest. */
export function issuerLevel(userId: number | null, level: UserLevel | null | undefined): IssuerLevel {
  if (userId === null) return 'system';
  return level ?? 'SUPERADMIN';
}
