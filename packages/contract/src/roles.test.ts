import { describe, expect, it } from 'vitest';
import { sessionEndedMessage } from './api/auth';
import { MESSAGES } from './messages';
import { canManage, levelsGivenBy, USER_LEVELS } from './roles';

describe('who manages whom', () => {
  it('a SUPERADMIN manages every account, an ADMIN USER accounts only, a USER none', () => {
    for (const target of USER_LEVELS) {
      expect(canManage({ userlevel: 'SUPERADMIN' }, target)).toBe(true);
      expect(canManage({ userlevel: 'ADMIN' }, target)).toBe(target === 'USER');
      expect(canManage({ userlevel: 'USER' }, target)).toBe(false);
    }
  });

  it('only a SUPERADMIN gives the ADMIN or SUPERADMIN level', () => {
    expect(levelsGivenBy('SUPERADMIN')).toEqual(['USER', 'ADMIN', 'SUPERADMIN']);
    expect(levelsGivenBy('ADMIN')).toEqual(['USER']);
    expect(levelsGivenBy(undefined)).toEqual(['USER']);
  });
});

describe('why a session ended', () => {
  it('has its own line for an administrator’s end and for the expiry, and a line for every other case', () => {
    expect(sessionEndedMessage('ended_by_admin')).toBe('Your session was ended by an administrator.');
    expect(sessionEndedMessage('expired')).toBe('Your session has expired.');
    expect(sessionEndedMessage('signed_out')).toBe(MESSAGES.sessionSignedOut);
    expect(sessionEndedMessage('password_reset')).toBe(MESSAGES.sessionPasswordReset);
    expect(sessionEndedMessage(null)).toBe(MESSAGES.sessionEnded);
  });
});
