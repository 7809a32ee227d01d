import { type ApiKey, KEY_MESSAGES, MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../api/client';
import {
  inactiveReasonText,
  keyActionFailureText,
  keyListFailureText,
  nextKeyStatus,
  validateKeyName,
  validateKeyPassword,
} from './keyForms';

describe('key name validate()', () => {
  it('needs a name, ignoring surrounding spaces', () => {
    expect(validateKeyName('')).toBe('Key name is required');
    expect(validateKeyName('   ')).toBe('Key name is required');
    expect(validateKeyName('billing integration')).toBeNull();
  });

  it('refuses names longer than 100 characters', () => {
    expect(validateKeyName('k'.repeat(100))).toBeNull();
    expect(validateKeyName('k'.repeat(101))).toEqual(expect.any(String));
  });
});

describe('key status', () => {
  it('one button toggles active and inactive', () => {
    expect(nextKeyStatus('active')).toBe('inactive');
    expect(nextKeyStatus('inactive')).toBe('active');
  });
});

describe('failure texts', () => {
  it('a refused list says why; any other list failure is the fetch text', () => {
    expect(keyListFailureText(new ApiError(403, { message: MESSAGES.unauthorised }))).toBe(
      MESSAGES.unauthorised,
    );
    expect(keyListFailureText(new ApiError(500, { message: 'Internal Server Error' }))).toBe(
      MESSAGES.cannotFetch,
    );
    expect(keyListFailureText(new NetworkError(new Error('offline')))).toBe(MESSAGES.cannotFetch);
  });

  it('an action shows the server message, "Please try after sometime." offline, else the error', () => {
    expect(keyActionFailureText(new ApiError(403, { message: 'You can change your own keys only.' }))).toBe(
      'You can change your own keys only.',
    );
    expect(keyActionFailureText(new NetworkError(new Error('offline')))).toBe(MESSAGES.tryAfterSometimeDot);
    expect(keyActionFailureText(new ApiError(502, null))).toBe('HTTP 502');
  });
});

describe('the Generate Key dialog', () => {
  it('needs the password typed again', () => {
    expect(validateKeyPassword('')).toBe('Password is required');
    expect(validateKeyPassword('Secret#123')).toBeNull();
  });
});

describe('why a key is inactive', () => {
  const off = (change: Partial<ApiKey>) => ({
    status: 'inactive' as const,
    deactivated_by: 'admin@lendlock.com',
    deactivated_by_level: 'ADMIN' as const,
    deactivated_reason: 'manual' as const,
    ...change,
  });

  it('says nothing for an active key', () => {
    expect(inactiveReasonText(off({ status: 'active' }))).toBeNull();
  });

  it('names who switched it off and why, and who may switch it on again', () => {
    const needsAdmin = KEY_MESSAGES.reactivationNeeds('ADMIN');
    expect(inactiveReasonText(off({}))).toBe(`Deactivated by admin@lendlock.com. ${needsAdmin}`);
    expect(inactiveReasonText(off({ deactivated_reason: 'account disabled' }))).toBe(
      `Deactivated when admin@lendlock.com disabled the account. ${needsAdmin}`,
    );
    expect(inactiveReasonText(off({ deactivated_reason: 'forced logout' }))).toBe(
      `Deactivated with the forced logout by admin@lendlock.com. ${needsAdmin}`,
    );
    expect(
      inactiveReasonText(
        off({
          deactivated_reason: 'password reset',
          deactivated_by: null,
          deactivated_by_level: 'SUPERADMIN',
        }),
      ),
    ).toBe(
      `Deactivated by the password reset of the account. ${KEY_MESSAGES.reactivationNeeds('SUPERADMIN')}`,
    );
  });

  it('an owner who switched their own key off is told nothing more; an unrecorded one just says so', () => {
    expect(
      inactiveReasonText(off({ deactivated_by: 'user@lendlock.com', deactivated_by_level: 'USER' })),
    ).toBe('Deactivated by user@lendlock.com.');
    expect(
      inactiveReasonText(off({ deactivated_reason: null, deactivated_by: null, deactivated_by_level: null })),
    ).toBe('Deactivated.');
  });
});
