/**
 * Who may work the kill switch, as the server decides it (COLLECTIONS_MESSAGES): an ADMIN or SUPERADMIN
 * who is not a retailer's user may stop collections at any time; only a SUPERADMIN resumes them. And the
 * reason's rule, the contract's.
 */
import { putKillSwitchRequestSchema, type Session } from '@lendlock/contract';
import { COLLECTIONS_LABELS as L } from './labels';

export interface KillSwitchControls {
  /** The button shown: stop while running, resume while stopped; null: none for this user. */
  button: 'stop' | 'resume' | null;
  /** Why this user has no button, or null. */
  note: string | null;
}

export function killSwitchControls(
  session: Pick<Session, 'userlevel' | 'retailer_phone'> | null,
  on: boolean,
): KillSwitchControls {
  const level = session?.userlevel;
  const operator = (level === 'ADMIN' || level === 'SUPERADMIN') && !session?.retailer_phone;
  if (!operator) return { button: null, note: on ? L.resumeSuperadminOnly : L.retailerCannotStop };
  if (!on) return { button: 'stop', note: null };
  return level === 'SUPERADMIN'
    ? { button: 'resume', note: null }
    : { button: null, note: L.resumeSuperadminOnly };
}

/** The reason's problem (the contract's rule: required, at most 500 characters), or null. */
export function validateReason(reason: string): string | null {
  const result = putKillSwitchRequestSchema.shape.reason.safeParse(reason);
  return result.success ? null : (result.error.issues[0]?.message ?? null);
}
