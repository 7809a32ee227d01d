import { type ConsoleUser, MESSAGES, PERMISSION_NAMES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../api/client';
import {
  addUserFailureText,
  EMPTY_ADD_USER,
  editDraftOf,
  editUserFailureText,
  nextUserStatus,
  offeredPermissions,
  permissionLabel,
  toAddUserRequest,
  toggleFailureText,
  toPermissionIds,
  toUpdateUserRequest,
  validateAddUser,
  validateEditUser,
  withLoggedOut,
  withUserStatus,
} from './userForms';

const rules = { allowedEmailDomains: ['lendlock.com', 'lendlock.in'], passwordMinLength: 8 };
const valid = { email: 'agent@lendlock.in', phone: '9876543210', password: 'Secret#123', permissions: [] };

const user = (overrides: Partial<ConsoleUser> = {}): ConsoleUser => ({
  id: 7,
  email: 'agent@lendlock.com',
  phone: '9876543210',
  userlevel: 'USER',
  permissions: [2, 5],
  permissions_id: [2, 5],
  permission_names: ['lockDevice', 'reports'],
  userstatus: 'ACTIVE',
  loginstatus: 'LOGIN',
  retailer_phone: null,
  created_at: '2024-01-01T00:00:00.000Z',
  ...overrides,
});

describe('Add User validate()', () => {
  it('accepts an allowed domain, 10 digits and a long enough password', () => {
    expect(validateAddUser(valid, rules)).toBeNull();
  });

  it.each([
    ['another domain', { email: 'agent@gmail.com' }, MESSAGES.invalidEmailDomain],
    ['no email', { email: '' }, MESSAGES.invalidEmailDomain],
    ['a look-alike domain', { email: 'agent@lendlock.com.evil.io' }, MESSAGES.invalidEmailDomain],
    ['9 digits', { phone: '987654321' }, MESSAGES.invalidPhone],
    ['11 digits', { phone: '98765432101' }, MESSAGES.invalidPhone],
    ['letters in the phone', { phone: '98765abcde' }, MESSAGES.invalidPhone],
    ['no password', { password: '' }, 'Password is required'],
    ['a short password', { password: 'short' }, 'Password must be at least 8 characters'],
  ])('refuses %s', (_, patch, message) => {
    expect(validateAddUser({ ...valid, ...patch }, rules)).toBe(message);
  });

  it('checks the email before the phone, as the spec lists them', () => {
    expect(validateAddUser({ ...EMPTY_ADD_USER }, rules)).toBe(MESSAGES.invalidEmailDomain);
  });
});

describe('Edit User validate()', () => {
  const draft = { id: 7, email: 'agent@lendlock.com', phone: '9876543210', permissions: ['2'] };

  it('accepts a selected user with an allowed email and 10 digits', () => {
    expect(validateEditUser(draft, rules)).toBeNull();
  });

  it.each([
    ['no selected user', { id: null }],
    ['an empty email', { email: '  ' }],
  ])("says 'Please fill all required fields.' with %s", (_, patch) => {
    expect(validateEditUser({ ...draft, ...patch }, rules)).toBe(MESSAGES.fillRequired);
  });

  it('applies the same domain check and the phone rule', () => {
    expect(validateEditUser({ ...draft, email: 'agent@example.com' }, rules)).toBe(
      MESSAGES.invalidEmailDomain,
    );
    expect(validateEditUser({ ...draft, phone: '12345' }, rules)).toBe(MESSAGES.invalidPhone);
  });
});

describe('request mapping', () => {
  it('sends the checked permissions as numbers, each once', () => {
    expect(toPermissionIds(['3', '1', '3', 'x', '0'])).toEqual([3, 1]);
  });

  const typed = {
    email: ' agent@lendlock.in ',
    phone: ' 9876543210',
    password: ' pass word ',
    permissions: ['4', '2'],
  };

  it('trims email and phone, keeps the password as typed, and sends a USER as the spec does (no level)', () => {
    expect(toAddUserRequest({ ...typed, userlevel: 'USER' })).toEqual({
      email: 'agent@lendlock.in',
      phone: '9876543210',
      password: ' pass word ',
      permissions: [4, 2],
    });
  });

  it('sends the level a SUPERADMIN chose, and no permissions for ADMIN or SUPERADMIN', () => {
    for (const userlevel of ['ADMIN', 'SUPERADMIN'] as const) {
      expect(toAddUserRequest({ ...typed, userlevel })).toEqual({
        email: 'agent@lendlock.in',
        phone: '9876543210',
        password: ' pass word ',
        permissions: [],
        userlevel,
      });
    }
  });

  it('edits start from the row and send id, email, phone and permission ids; the level only when changed', () => {
    const draft = editDraftOf(user({ phone: null }));
    expect(draft).toEqual({
      id: 7,
      email: 'agent@lendlock.com',
      phone: '',
      permissions: ['2', '5'],
      userlevel: 'USER',
    });
    const edited = { ...draft, id: 7, phone: '9123456780', permissions: ['5'] };
    expect(toUpdateUserRequest(edited, 'USER')).toEqual({
      id: 7,
      email: 'agent@lendlock.com',
      phone: '9123456780',
      permissions: [5],
    });
    expect(toUpdateUserRequest({ ...edited, userlevel: 'ADMIN' }, 'USER')).toEqual({
      id: 7,
      email: 'agent@lendlock.com',
      phone: '9123456780',
      permissions: [],
      userlevel: 'ADMIN',
    });
  });

  it('an edit does not carry a permission that opens nothing for a USER (held from before)', () => {
    const held = user({
      permissions: [2, 19, 28],
      permission_names: ['lockDevice', 'userManagement', 'deviceAction'],
    });
    expect(editDraftOf(held).permissions).toEqual(['2']);
  });
});

describe('permissions as the screen shows them', () => {
  const all = PERMISSION_NAMES.map((permission_name, i) => ({ id: i + 1, permission_name }));

  it('names each by its screen as the menu does', () => {
    expect(permissionLabel('lockDevice')).toBe('Lock Device');
    expect(permissionLabel('appversion')).toBe('App Version');
    expect(permissionLabel('keyManagement')).toBe('Key Management');
    expect(permissionLabel('unknownThing')).toBe('unknownThing');
  });

  it('offers a USER every permission but User Management and Device Action, and no Set Wallpaper twice', () => {
    const offered = offeredPermissions(all).map((p) => p.permission_name);
    expect(offered).not.toContain('userManagement');
    expect(offered).not.toContain('deviceAction');
    expect(offered).not.toContain('batch');
    expect(offered).toContain('setWallpaper');
    expect(offered).toContain('keyManagement');
    expect(offered).toHaveLength(PERMISSION_NAMES.length - 2);
    expect(new Set(offered.map(permissionLabel)).size).toBe(offered.length);
  });
});

describe('failure texts', () => {
  const refused = new ApiError(409, {
    status: 'error',
    code: 'CONFLICT',
    message: 'A user with this email already exists',
  });
  const bare = new ApiError(500, null);
  const offline = new NetworkError(new TypeError('Failed to fetch'));

  it('Add user: the server message, else "Error updating user.", offline "Please try after sometime."', () => {
    expect(addUserFailureText(refused)).toBe('A user with this email already exists');
    expect(addUserFailureText(bare)).toBe(MESSAGES.errorUpdatingUser);
    expect(addUserFailureText(new Error('boom'))).toBe(MESSAGES.errorUpdatingUser);
    expect(addUserFailureText(offline)).toBe(MESSAGES.tryAfterSometimeDot);
  });

  it('Edit user: the server message, else "Error saving user. Please try again."', () => {
    expect(editUserFailureText(refused)).toBe('A user with this email already exists');
    expect(editUserFailureText(bare)).toBe(MESSAGES.errorSavingUser);
    expect(editUserFailureText(offline)).toBe(MESSAGES.errorSavingUser);
  });

  it('toggles: alerted raw, the server message or the error itself', () => {
    const forbidden = new ApiError(403, { message: 'An ADMIN can manage USER accounts only.' });
    expect(toggleFailureText(forbidden)).toBe('An ADMIN can manage USER accounts only.');
    expect(toggleFailureText(bare)).toBe('HTTP 500');
    expect(toggleFailureText(offline)).toBe('Network request failed');
  });
});

describe('status toggles', () => {
  it('flips ACTIVE and INACTIVE', () => {
    expect(nextUserStatus('ACTIVE')).toBe('INACTIVE');
    expect(nextUserStatus('INACTIVE')).toBe('ACTIVE');
  });

  it('disabling a user shows them logged out too; enabling keeps the login status', () => {
    const list = [user(), user({ id: 8, email: 'other@lendlock.com' })];
    const disabled = withUserStatus(list, 'agent@lendlock.com', 'INACTIVE');
    expect(disabled[0]).toMatchObject({ userstatus: 'INACTIVE', loginstatus: 'LOGOUT' });
    expect(disabled[1]).toEqual(list[1]);
    const enabled = withUserStatus(
      [user({ userstatus: 'INACTIVE', loginstatus: 'LOGOUT' })],
      'agent@lendlock.com',
      'ACTIVE',
    );
    expect(enabled[0]).toMatchObject({ userstatus: 'ACTIVE', loginstatus: 'LOGOUT' });
  });

  it('a forced logout sets LOGOUT on that row only', () => {
    const list = [user(), user({ id: 8, email: 'other@lendlock.com' })];
    const after = withLoggedOut(list, 'other@lendlock.com');
    expect(after.map((row) => row.loginstatus)).toEqual(['LOGIN', 'LOGOUT']);
  });
});
