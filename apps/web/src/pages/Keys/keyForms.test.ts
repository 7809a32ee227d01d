import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../api/client';
import { keyActionFailureText, keyListFailureText, nextKeyStatus, validateKeyName } from './keyForms';

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
