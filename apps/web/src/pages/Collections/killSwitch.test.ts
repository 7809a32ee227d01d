/** Who gets which kill switch button, as the server decides it, and the reason's rule (the contract's). */
import { COLLECTIONS_MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { killSwitchControls, validateReason } from './killSwitch';
import { COLLECTIONS_LABELS as L } from './labels';

describe('kill switch controls', () => {
  it('an ADMIN or SUPERADMIN may stop collections while they run', () => {
    expect(killSwitchControls({ userlevel: 'ADMIN' }, false)).toEqual({ button: 'stop', note: null });
    expect(killSwitchControls({ userlevel: 'SUPERADMIN' }, false)).toEqual({ button: 'stop', note: null });
  });

  it('only a SUPERADMIN may resume them; an ADMIN is told why there is no button', () => {
    expect(killSwitchControls({ userlevel: 'SUPERADMIN' }, true)).toEqual({ button: 'resume', note: null });
    expect(killSwitchControls({ userlevel: 'ADMIN' }, true)).toEqual({
      button: null,
      note: L.resumeSuperadminOnly,
    });
  });

  it('a retailer’s user and a USER get no button', () => {
    expect(killSwitchControls({ userlevel: 'ADMIN', retailer_phone: '9876543210' }, false)).toEqual({
      button: null,
      note: L.retailerCannotStop,
    });
    expect(killSwitchControls({ userlevel: 'USER' }, false).button).toBeNull();
    expect(killSwitchControls(null, true).button).toBeNull();
  });

  it('a reason is required (the contract’s message) and at most 500 characters', () => {
    expect(validateReason('  ')).toBe(COLLECTIONS_MESSAGES.reasonRequired);
    expect(validateReason('x'.repeat(501))).not.toBeNull();
    expect(validateReason('dispute with the lender')).toBeNull();
  });
});
