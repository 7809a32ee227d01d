import { describe, expect, it } from 'vitest';
import { MESSAGES } from './messages';

describe('message catalogue', () => {
  it('keeps the spec texts exactly, typos included', () => {
    expect(MESSAGES.unauthorised).toBe(
      'You are not authorised to use this feature.Contact Your Admin for support',
    );
    expect(MESSAGES.noticeExpires('2026-11-21 18:00:00')).toBe(
      'Dear User your login access Expires on 2026-11-21 18:00:00. Login again',
    );
    expect(MESSAGES.loginNetworkFailure).toBe('Please try after sometime');
    expect(MESSAGES.authorizationFailed).toBe('Authorization Failed');
    expect(MESSAGES.authorizationFailedInvalid).toBe('Authorization Failed.Invalid');
  });
});
